"""Rust facts: `pub` visibility, `///` docs above attributes, tests by attribute."""

from __future__ import annotations

import re

from tree_sitter import Node

from services.source.common import Ctx, Scopes, captures
from services.source.stdlib import group_of

_CAPTURES = (
    ("function_item", "function"),
    ("function_signature_item", "function"),
    ("struct_item", "struct"),
    ("union_item", "struct"),
    ("enum_item", "enum"),
    ("trait_item", "interface"),
    ("type_item", "type"),
    ("const_item", "constant"),
    ("static_item", "constant"),
    ("mod_item", "module"),
    ("let_declaration", "let"),
    ("parameter", "param"),
    ("field_declaration", "field"),
    ("use_declaration", "use"),
    ("attribute_item", "attribute"),
    ("impl_item", "impl"),
    ("closure_expression", "closure"),
    ("string_literal", "string"),
    ("line_comment", "comment"),
    ("block_comment", "comment"),
)
_TEST_ATTRIBUTE = re.compile(rb"#\[\s*(?:\w+::)*(?:test|rstest|quickcheck|proptest)\b")
_PRINT = re.compile(rb"(e?print(?:ln)?|dbg)!\s*[(\[{]")
_LOG = re.compile(rb"(trace|debug|info|warn|error)!\s*[(\[{]")
_MACRO_PARENTS = frozenset({"macro_invocation", "scoped_identifier"})
_TYPE_NAME = re.compile(r"(\w+)\s*(?:<.*)?$", re.S)


class _File:
    def __init__(self, ctx: Ctx, caps: dict[str, list[Node]]) -> None:
        self.ctx = ctx
        self.containers = Scopes(
            caps.get("impl", []) + caps.get("interface", []) + caps.get("module", []) + caps.get("function", [])
        )
        self.closures = Scopes(caps.get("function", []) + caps.get("closure", []))
        # Attributes by the row they end on: items find theirs by looking at the rows above.
        self.attributes: dict[int, Node] = {node.end_point.row: node for node in caps.get("attribute", ())}
        self.test_ranges: list[tuple[int, int]] = []

    def leading(self, node: Node) -> tuple[Node, bytes]:
        """The first attribute above ``node`` (docs sit above attributes) and their text."""
        first = node
        texts: list[bytes] = []
        attribute = self.attributes.get(node.start_point.row - 1)
        while attribute is not None:
            first = attribute
            texts.append(self.ctx.data[attribute.start_byte : attribute.end_byte])
            attribute = self.attributes.get(attribute.start_point.row - 1)
        return first, b" ".join(texts)

    def in_tests(self, node: Node) -> bool:
        return any(start <= node.start_byte < end for start, end in self.test_ranges)


def extract(ctx: Ctx, module: str) -> None:
    caps = captures("rust", _CAPTURES, ctx.root)
    data = ctx.data
    for node in caps.get("comment", ()):
        start = node.start_byte
        if data.startswith((b"///", b"/**", b"//!"), start) and not data.startswith(b"////", start):
            ctx.doc_comment(node)
    file = _File(ctx, caps)
    for node in caps.get("module", ()):  # `#[cfg(test)] mod tests { ... }`: unit tests beside the code
        if b"cfg(test)" in file.leading(node)[1].replace(b" ", b""):
            file.test_ranges.append((node.start_byte, node.end_byte))
    for node in caps.get("use", ()):
        _use(ctx, node)
    for kind in ("struct", "enum", "interface", "constant", "module", "type", "function"):
        for node in caps.get(kind, ()):
            _item(file, node, kind)
    for key, role in (("let", "variable"), ("param", "parameter")):
        for node in caps.get(key, ()):
            pattern = node.child_by_field_name("pattern")
            if pattern is not None and pattern.type == "mut_pattern":
                pattern = pattern.named_children[-1] if pattern.named_child_count else None
            if pattern is not None and pattern.type == "identifier":
                closures = file.closures
                scope = node.start_byte if role == "parameter" else closures.start(closures.at(node.start_byte))
                ctx.ident(ctx.text(pattern), role, node.start_point.row, scope)
    containers = file.containers
    for node in caps.get("field", ()):
        name = node.child_by_field_name("name")
        ctx.ident(ctx.text(name), "field", node.start_point.row, containers.start(containers.at(node.start_byte)))
    ctx.quote_double += len(caps.get("string", ()))
    for match, node in ctx.sites(_PRINT, 1):
        if node.type == "identifier" and node.parent is not None and node.parent.type == "macro_invocation":
            ctx.statement("print_call", node.start_point.row, match.group(1).decode())
    style = "tracing" if b"tracing" in data else "log"
    for _, node in ctx.sites(_LOG, 1):
        parent = node.parent
        if node.type == "identifier" and parent is not None and parent.type in _MACRO_PARENTS:
            ctx.statement("logging_call", node.start_point.row, style)


def _visibility(ctx: Ctx, node: Node) -> str:
    for child in node.children:
        if child.type == "visibility_modifier":
            return "public" if ctx.text(child) == "pub" else "internal"
    return "private"


def _item(file: _File, node: Node, kind: str) -> None:
    ctx = file.ctx
    name = ctx.text(node.child_by_field_name("name"))
    containers = file.containers
    container = containers.get(containers.around(node))
    parent = ""
    if container is not None:
        if container.type == "impl_item":
            match = _TYPE_NAME.search(ctx.text(container.child_by_field_name("type")))
            parent = match.group(1) if match else ""
        else:
            parent = ctx.text(container.child_by_field_name("name"))
        if kind == "function" and container.type in ("impl_item", "trait_item"):
            kind = "method"
    first, attributes = file.leading(node)
    in_tests = file.in_tests(node)
    is_test = kind in ("function", "method") and (bool(_TEST_ATTRIBUTE.search(attributes)) or in_tests)
    if kind == "module" and in_tests:
        is_test = True
    role = {"function": "function", "method": "method", "constant": "constant", "module": ""}.get(kind, "class")
    if is_test and kind in ("function", "method"):
        role = "test_function"
    if role:
        ctx.ident(name, role, node.start_point.row, containers.start(containers.around(node)))
    if kind == "type":
        return
    visibility = _visibility(ctx, container if container is not None and container.type == "trait_item" else node)
    ctx.symbol(kind, name, first.start_point.row, node.end_point.row, visibility,
               doc=ctx.has_doc(first), annotated=kind in ("function", "method"), parent=parent,
               is_test=is_test)  # fmt: skip
    if kind == "module" and node.child_by_field_name("body") is None:
        # `mod foo;` pulls in foo.rs / foo/mod.rs: the way Rust files depend on each other.
        ctx.add_import(f"self::{name}", ("",), node.start_point.row, relative=True, group="local")


def _use(ctx: Ctx, node: Node) -> None:
    argument = node.child_by_field_name("argument")
    row = node.start_point.row
    for module, names in _use_tree(ctx, argument, ""):
        relative = module.split("::", 1)[0] in ("self", "super")
        ctx.add_import(module, names, row, relative=relative, group=group_of("rust", module, relative=relative))


def _use_tree(ctx: Ctx, node: Node | None, prefix: str) -> list[tuple[str, tuple[str, ...]]]:
    """Flatten a use tree into (module path, imported names) pairs."""
    if node is None:
        return []
    join = lambda p: f"{prefix}::{p}" if prefix and p else prefix or p  # noqa: E731
    kind = node.type
    if kind == "scoped_use_list":
        base = join(ctx.text(node.child_by_field_name("path")))
        names: list[str] = []
        nested: list[tuple[str, tuple[str, ...]]] = []
        for item in (node.child_by_field_name("list") or node).named_children:
            if item.type in ("scoped_use_list", "use_list", "use_wildcard") or item.type == "scoped_identifier":
                nested.extend(_use_tree(ctx, item, base))
            else:
                names.append(ctx.text(item.child_by_field_name("path") if item.type == "use_as_clause" else item))
        return ([(base, tuple(names))] if names else []) + nested
    if kind == "use_list":
        found: list[tuple[str, tuple[str, ...]]] = []
        for item in node.named_children:
            found.extend(_use_tree(ctx, item, prefix))
        return found
    if kind == "use_wildcard":
        inner = node.named_children[0] if node.named_child_count else None
        return [(join(ctx.text(inner)) if inner is not None else prefix, ("*",))]
    if kind == "use_as_clause":
        node = node.child_by_field_name("path") or node
    full = join(ctx.text(node))
    if "::" in full:
        module, name = full.rsplit("::", 1)
        return [(module, (name,))]
    return [(full, ("",))]
