"""JavaScript, TypeScript and TSX extraction."""

from __future__ import annotations

from services.source.facts import Import

from .support import facts_of, roles, statements, symbol
from .support import quotes as _quotes

TS = """
import fs from "node:fs";
import path from 'path';
import { formatMoney as fmt, parse } from "./money";
import * as api from "../api/client.js";
import type { Invoice } from "@acme/types";
import "./polyfills";
const lodash = require("lodash");
export { parse as parseAmount } from "./parse";

export const MAX_ITEMS = 10;
const defaultTimeout = 30;
let counter = 0;

/** Sums invoice lines. */
export function total(lines: number[], tax: number): number {
  return lines.reduce((a, b) => a + b, 0) * tax;
}

function untyped(a, b) {
  console.log("untyped", a);
  try { JSON.parse(a); } catch (e) { /* ignore */ }
  return a;
}

export default class InvoiceStore extends Store {
  #cache = new Map();
  private readonly name: string = "store";
  static count = 0;

  /** Creates the store. */
  constructor(private client: Client) {
    super();
    this.items = [];
  }

  async load(id: string): Promise<Invoice> {
    console.error(`loading ${id}`);
    return this.client.get(id);
  }

  protected refresh() {}

  #evict(key: string): void {}
}

export const handler = async (event: Event, context) => {
  const { body, headers } = event;
  return body;
};

export interface Shape { area(): number }
type Id = string;
enum Color { Red, Green }
"""


def test_typescript_symbols() -> None:
    facts = facts_of("src/billing/store.ts", TS)
    assert facts.language == "typescript"
    assert facts.module == "src/billing/store"
    total = symbol(facts, "total")
    assert (total.kind, total.visibility, total.has_docstring, total.has_annotations) == (
        "function",
        "public",
        True,
        True,
    )
    untyped = symbol(facts, "untyped")
    assert (untyped.visibility, untyped.has_annotations) == ("private", False)
    store = symbol(facts, "InvoiceStore")
    assert (store.kind, store.visibility) == ("class", "public")
    ctor = symbol(facts, "constructor")
    assert (ctor.parent, ctor.has_docstring, ctor.has_annotations) == ("InvoiceStore", True, True)
    load = symbol(facts, "load")
    assert (load.kind, load.visibility, load.has_annotations) == ("method", "public", True)
    assert symbol(facts, "refresh").visibility == "protected"
    assert symbol(facts, "#evict").visibility == "private"
    handler = symbol(facts, "handler")
    assert (handler.kind, handler.visibility, handler.has_annotations) == ("function", "public", False)
    assert symbol(facts, "MAX_ITEMS").kind == "constant"
    assert symbol(facts, "defaultTimeout").visibility == "private"
    assert symbol(facts, "counter").kind == "variable"
    assert symbol(facts, "lodash").kind == "variable"  # a require() binding is not a constant
    assert symbol(facts, "Shape").kind == "interface"
    assert symbol(facts, "Color").kind == "enum"


def test_typescript_identifiers() -> None:
    facts = facts_of("src/store.ts", TS)
    assert roles(facts, "class") == ["InvoiceStore", "Shape", "Id", "Color"]
    assert roles(facts, "method") == ["load", "refresh", "#evict"]
    assert roles(facts, "field") == ["#cache", "name", "count"]
    assert roles(facts, "attribute") == ["items"]
    assert set(roles(facts, "parameter")) == {"lines", "tax", "a", "b", "client", "id", "key", "event", "context"}
    assert roles(facts, "constant") == ["MAX_ITEMS", "defaultTimeout"]
    # `const { body, headers } = event` spells the event's keys, not names of the author's.
    assert set(roles(facts, "variable")) == {"lodash", "counter"}


def test_typescript_imports_and_statements() -> None:
    facts = facts_of("src/store.ts", TS)
    assert facts.imports == (
        Import("node:fs", ("default",), 1, "", False, "stdlib"),
        Import("path", ("default",), 2, "", False, "stdlib"),
        Import("./money", ("formatMoney", "parse"), 3, "", True, "local"),
        Import("../api/client.js", ("*",), 4, "", True, "local"),
        Import("@acme/types", ("Invoice",), 5, "", False, "third_party"),
        Import("./polyfills", ("",), 6, "", True, "local"),
        Import("lodash", ("",), 7, "", False, "third_party"),
        Import("./parse", ("parse",), 8, "", True, "local"),
    )
    assert statements(facts) == [  # line 21's catch holds a comment: deliberate, not swallowed
        ("print_call", 20, "console.log"),
        ("console_call", 37, "console.error"),
    ]
    assert _quotes(facts) == (9, 1)


def test_commonjs_exports_and_jsdoc() -> None:
    facts = facts_of(
        "lib/util.js",
        """
        'use strict';
        /**
         * Pads a string.
         */
        function pad(s, n) { return s; }
        function hidden() {}
        const helper = function () {};
        module.exports = { pad, helper };
        """,
    )
    assert facts.language == "javascript"
    pad = symbol(facts, "pad")
    assert (pad.visibility, pad.has_docstring, pad.has_annotations) == ("public", True, False)
    assert symbol(facts, "hidden").visibility == "private"
    assert symbol(facts, "helper").visibility == "public"


def test_tsx_and_jest_files() -> None:
    facts = facts_of(
        "src/components/__tests__/Button.test.tsx",
        """
        import { render } from "@testing-library/react";
        import { Button } from "../Button";

        export function Wrapper({ label }: Props): JSX.Element {
          return <Button title="Save" label={label} kind='primary' />;
        }

        describe("Button", () => {
          it("renders", () => {
            render(<Wrapper label='x' />);
          });
        });
        """,
    )
    assert facts.language == "tsx"
    assert facts.is_test
    assert facts.tests_for == ("Button", "src/components/Button")
    assert symbol(facts, "Wrapper").has_annotations
    # JSX attribute values do not count as the code's quote style
    assert _quotes(facts) == (4, 0)


def test_destructured_names_sit_on_their_own_lines() -> None:
    facts = facts_of("a.js", "function f(pair) {\n  let [\n    url,\n    onUploadProgress,\n  ] = pair;\n}\n")
    assert [(i.name, i.line) for i in facts.identifiers if i.role == "variable"] == [
        ("url", 3),
        ("onUploadProgress", 4),
    ]
    # axios's `let { url, onUploadProgress } = config` spells config's keys: no name of its own.
    keys = facts_of("a.js", "function f(config) {\n  let {\n    url,\n    onUploadProgress,\n  } = config;\n}\n")
    assert [i.name for i in keys.identifiers if i.role == "variable"] == []


def test_an_empty_catch_swallows_and_one_that_says_why_does_not() -> None:
    source = (
        "export function charsetDecoder(charset) {\n"
        "  try {\n    return new TextDecoder(charset);\n  } catch {}\n"
        "  try {\n    return decodeURIComponent(charset);\n  } catch {\n    // Skip decoding\n  }\n"
        "  return new TextDecoder();\n}\n"
    )
    assert statements(facts_of("src/decode.js", source)) == [("swallowed_exception", 4, "")]
