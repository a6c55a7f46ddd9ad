"""Rust, C, C++, Ruby and PHP extraction."""

from __future__ import annotations

from .support import facts_of, roles, statements, symbol
from .support import quotes as _quotes

RUST = """
use std::collections::HashMap;
use crate::db::{self, Conn as Connection};
use super::util::*;
use serde::Serialize;

/// Page size.
pub const PAGE_SIZE: usize = 20;
static mut COUNTER: u32 = 0;

/// A store.
#[derive(Debug)]
pub struct Store { pub name: String, count: u32 }

pub(crate) enum Color { Red }
pub trait Api { fn get(&self) -> u32; }
mod inner;

impl Store {
    /// Creates one.
    pub fn new(name: String) -> Self { let total = 0; println!("{}", total); Store { name, count: 0 } }
    fn helper(&self, n: u32) { log::info!("n={}", n); }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn creates_store() {}
}
"""


def test_rust() -> None:
    facts = facts_of("src/store.rs", RUST)
    page = symbol(facts, "PAGE_SIZE")
    assert (page.kind, page.visibility, page.has_docstring) == ("constant", "public", True)
    assert symbol(facts, "COUNTER").visibility == "private"
    store = symbol(facts, "Store")
    assert (store.kind, store.has_docstring, store.start_line) == ("struct", True, 11)  # docs sit above #[derive]
    assert symbol(facts, "Color").visibility == "internal"
    assert symbol(facts, "Api").kind == "interface"
    assert symbol(facts, "get").visibility == "public"  # trait methods share the trait's visibility
    new = symbol(facts, "new")
    assert (new.kind, new.parent, new.visibility, new.has_docstring) == ("method", "Store", "public", True)
    assert symbol(facts, "helper").visibility == "private"
    assert symbol(facts, "tests").is_test
    creates = symbol(facts, "creates_store")
    assert (creates.is_test, creates.parent) == (True, "tests")
    assert not facts.is_test  # unit tests beside the code do not make the file a test file
    assert roles(facts, "field") == ["name", "count"]
    assert roles(facts, "test_function") == ["creates_store"]
    assert roles(facts, "variable") == ["total"]
    assert [(i.module, i.names, i.is_relative, i.group) for i in facts.imports] == [
        ("std::collections", ("HashMap",), False, "stdlib"),
        ("crate::db", ("self", "Conn"), False, "local"),
        ("super::util", ("*",), True, "local"),
        ("serde", ("Serialize",), False, "third_party"),
        ("self::inner", ("",), True, "local"),
        ("super", ("*",), True, "local"),
    ]
    assert statements(facts) == [("print_call", 20, "println"), ("logging_call", 21, "log")]


def test_rust_integration_tests_dir() -> None:
    facts = facts_of("tests/store_api.rs", "#[test]\nfn works() {}\n")
    assert facts.is_test
    assert facts.tests_for == ("store_api",)


def test_c() -> None:
    facts = facts_of(
        "src/util/point.c",
        """
        #include <stdio.h>
        #include <zlib.h>
        #include "util/point.h"
        #define MAX_POINTS 64

        /** A point. */
        struct point { int x; int y; };
        typedef struct { int a; } pair_t;
        static int counter = 0;
        const char *NAME = "p";

        /* Adds two numbers. */
        int add(int a, int b) { int sum = a + b; printf("%d", sum); return sum; }
        static void helper(void) {}
        """,
    )
    assert facts.language == "c"
    assert symbol(facts, "MAX_POINTS").kind == "constant"
    point = symbol(facts, "point")
    assert (point.kind, point.has_docstring) == ("struct", True)
    assert symbol(facts, "pair_t").kind == "struct"
    assert symbol(facts, "counter").visibility == "private"
    assert symbol(facts, "NAME").kind == "constant"
    add = symbol(facts, "add")
    assert (add.kind, add.visibility, add.has_docstring) == ("function", "public", True)
    assert symbol(facts, "helper").visibility == "private"
    assert roles(facts, "field") == ["x", "y", "a"]
    assert roles(facts, "parameter") == ["a", "b"]
    assert roles(facts, "variable") == ["counter", "sum"]
    assert [(i.module, i.is_relative, i.group) for i in facts.imports] == [
        ("stdio.h", False, "stdlib"),
        ("zlib.h", False, "third_party"),
        ("util/point.h", True, "local"),
    ]
    assert statements(facts) == [("print_call", 13, "printf")]


def test_cpp_header_detected_by_content() -> None:
    facts = facts_of(
        "include/store.h",
        """
        #include <vector>
        namespace acme {
        /// A store.
        class Store : public Base {
        public:
          int get(int key) const { return key; }
          void flush();
        private:
          int count_;
          void helper();
        };
        int Store::size() const { return 0; }
        }
        """,
    )
    assert facts.language == "cpp"
    store = symbol(facts, "Store")
    assert (store.kind, store.has_docstring) == ("class", True)
    assert symbol(facts, "get").visibility == "public"
    assert symbol(facts, "flush").visibility == "public"
    helper = symbol(facts, "helper")
    assert (helper.kind, helper.parent, helper.visibility) == ("method", "Store", "private")
    assert symbol(facts, "size").parent == "Store"
    assert roles(facts, "field") == ["count_"]


def test_ruby() -> None:
    facts = facts_of(
        "lib/acme/store.rb",
        """
        require 'json'
        require_relative '../support/util'

        MAX_SIZE = 10

        # Keeps invoices.
        class Store < Base
          # Builds one.
          def initialize(name)
            @name = name
            total = 0
          end

          def self.create(opts = {}) end

          def save(record, *rest, key:, &blk)
            puts "saving"
            logger.info("saved")
          end

          private

          def helper; end
        end

        module Util
          def self.go; end
        end
        """,
    )
    assert symbol(facts, "MAX_SIZE").kind == "constant"
    store = symbol(facts, "Store")
    assert (store.kind, store.has_docstring) == ("class", True)
    assert symbol(facts, "initialize").has_docstring
    assert symbol(facts, "save").visibility == "public"
    assert symbol(facts, "helper").visibility == "private"
    assert symbol(facts, "create").parent == "Store"
    assert symbol(facts, "Util").kind == "module"
    assert roles(facts, "attribute") == ["name"]
    assert roles(facts, "variable") == ["total"]
    assert roles(facts, "parameter") == ["name", "opts", "record", "rest", "key", "blk"]
    assert [(i.module, i.is_relative, i.group) for i in facts.imports] == [
        ("json", False, "stdlib"),
        ("../support/util", True, "local"),
    ]
    assert statements(facts) == [("print_call", 17, "puts"), ("logging_call", 18, "logger")]
    assert _quotes(facts) == (2, 2)


def test_ruby_specs() -> None:
    facts = facts_of("spec/models/invoice_spec.rb", "require 'rails_helper'\n")
    assert facts.is_test
    assert facts.tests_for == ("invoice",)


def test_php() -> None:
    facts = facts_of(
        "app/Models/User.php",
        """
        <?php
        namespace App\\Models;

        use App\\Support\\Str;
        use Illuminate\\Database\\Eloquent\\Model as Base;
        require_once 'helpers.php';

        /** A user. */
        class User extends Base
        {
            public const ROLE = 'admin';
            private string $name;

            /** The name. */
            public function getName(int $id): string { $greeting = "hi"; echo $greeting; return $this->name; }
            private static function helper($x) {}
        }
        function top_level($a) {}
        """,
    )
    user = symbol(facts, "User")
    assert (user.kind, user.has_docstring) == ("class", True)
    get_name = symbol(facts, "getName")
    assert (get_name.visibility, get_name.has_docstring, get_name.has_annotations) == ("public", True, True)
    helper = symbol(facts, "helper")
    assert (helper.visibility, helper.has_annotations) == ("private", False)
    assert symbol(facts, "ROLE").parent == "User"
    assert symbol(facts, "top_level").kind == "function"
    assert roles(facts, "field") == ["name"]
    assert roles(facts, "variable") == ["greeting"]
    assert [(i.module, i.names, i.group) for i in facts.imports] == [
        ("App\\Support\\Str", ("Str",), "local"),
        ("Illuminate\\Database\\Eloquent\\Model", ("Base",), "third_party"),
        ("helpers.php", ("",), "local"),
    ]
    assert statements(facts) == [("print_call", 15, "echo")]
