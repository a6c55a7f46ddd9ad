"""C# facts: modifiers for visibility (members default to private, types to internal)."""

from __future__ import annotations

import re

from tree_sitter import Node

from services.source.common import Ctx, Scopes, captures
from services.source.lang_java import catch_catch, jvm_sites
from services.source.stdlib import group_of

_CAPTURES = (
    ("namespace_declaration", "namespace"),
    ("file_scoped_namespace_declaration", "namespace"),
    ("class_declaration", "class"),
    ("record_declaration", "class"),
    ("struct_declaration", "struct"),
    ("record_struct_declaration", "struct"),
    ("interface_declaration", "interface"),
    ("enum_declaration", "enum"),
    ("method_declaration", "method"),
    ("constructor_declaration", "method"),
    ("property_declaration", "property"),
    ("field_declaration", "field"),
    ("local_declaration_statement", "local"),
    ("local_function_statement", "lambda"),
    ("lambda_expression", "lambda"),
    ("parameter", "param"),
    ("catch_clause", "catch"),
    ("using_directive", "using"),
    ("string_literal", "string"),
    ("verbatim_string_literal", "string"),
    ("comment", "comment"),
)
_PRINT = re.compile(rb"(Console\s*\.\s*Write(?:Line)?)\s*\(")
_TEST_ATTRIBUTES = re.compile(r"\[\s*(?:\w+\.)*(?:Test|TestMethod|Fact|Theory|TestCase|DataTestMethod)\b")


def _modifiers(ctx: Ctx, node: Node) -> set[str]:
    return {ctx.text(child) for child in node.children if child.type == "modifier"}


def _visibility(modifiers: set[str], owner: Node | None) -> str:
    for word in ("public", "private", "protected", "internal"):
        if word in modifiers:
            return word
    if owner is not None and owner.type == "interface_declaration":
        return "public"
    return "private" if owner is not None else "internal"


def _parent(ctx: Ctx, owner: Node | None) -> str:
    return ctx.text(owner.child_by_field_name("name")) if owner is not None else ""


def extract(ctx: Ctx, module: str) -> None:
    caps = captures("csharp", _CAPTURES, ctx.root)
    data = ctx.data
    types = Scopes([n for kind in ("class", "struct", "interface", "enum") for n in caps.get(kind, ())])
    callables = Scopes(caps.get("method", []) + caps.get("lambda", []))
    for node in caps.get("comment", ()):
        if data.startswith(b"///", node.start_byte) or data.startswith(b"/**", node.start_byte):
            ctx.doc_comment(node)
    for node in caps.get("namespace", ()):
        ctx.own_package = ctx.text(node.child_by_field_name("name")).split(".", 1)[0]
    for node in caps.get("using", ()):
        target = next((c for c in node.named_children if c.type in ("qualified_name", "identifier")), None)
        alias = node.child_by_field_name("name")
        if alias is not None:
            target = next((c for c in node.named_children if c.start_byte > alias.start_byte), None)
        path = ctx.text(target)
        group = group_of("csharp", path, relative=False, own_package=ctx.own_package)
        ctx.add_import(path, (ctx.text(alias),), node.start_point.row, group=group)
    for kind in ("class", "struct", "interface", "enum"):
        for node in caps.get(kind, ()):
            _type(ctx, node, kind, types.get(types.around(node)))
    for node in caps.get("method", ()):
        _method(ctx, node, types.get(types.around(node)))
    for node in caps.get("field", ()):
        _field(ctx, node, types.get(types.around(node)))
    for node in caps.get("property", ()):
        name = ctx.text(node.child_by_field_name("name"))
        ctx.ident(name, "attribute", node.start_point.row, types.start(types.around(node)))
    for node in caps.get("local", ()):
        scope = callables.start(callables.at(node.start_byte))
        for declarator in _declarators(node):
            name = ctx.text(declarator.child_by_field_name("name"))
            ctx.ident(name, "variable", node.start_point.row, scope)
    for node in caps.get("param", ()):
        name_node = node.child_by_field_name("name")
        if name_node is not None:
            ctx.ident(ctx.text(name_node), "parameter", name_node.start_point.row, node.start_byte)
    for node in caps.get("catch", ()):
        catch_catch(ctx, node, ("Exception", "SystemException"))
    ctx.quote_double += len(caps.get("string", ()))
    if b"Console" in data:
        for match, node in ctx.sites(_PRINT, 1):
            if node.type == "member_access_expression":
                ctx.statement("print_call", node.start_point.row, match.group(1).decode())
    jvm_sites(ctx)


def _declarators(node: Node) -> list[Node]:
    declaration = next((c for c in node.named_children if c.type == "variable_declaration"), None)
    if declaration is None:
        return []
    return [c for c in declaration.named_children if c.type == "variable_declarator"]


def _type(ctx: Ctx, node: Node, kind: str, owner: Node | None) -> None:
    name = ctx.text(node.child_by_field_name("name"))
    is_test = ctx.is_test_file and name.endswith(("Test", "Tests"))
    ctx.ident(name, "class", node.start_point.row)
    ctx.symbol(kind, name, node.start_point.row, node.end_point.row, _visibility(_modifiers(ctx, node), owner),
               doc=ctx.has_doc(node), parent=_parent(ctx, owner), is_test=is_test)  # fmt: skip


def _method(ctx: Ctx, node: Node, owner: Node | None) -> None:
    name = ctx.text(node.child_by_field_name("name"))
    attributes = " ".join(ctx.text(c) for c in node.named_children if c.type == "attribute_list")
    is_test = bool(attributes and _TEST_ATTRIBUTES.search(attributes))
    if node.type == "method_declaration":
        ctx.ident(name, "test_function" if is_test else "method", node.start_point.row)
    # Doc comments sit above the attributes, which belong to the declaration node.
    ctx.symbol("method", name, node.start_point.row, node.end_point.row,
               _visibility(_modifiers(ctx, node), owner), doc=ctx.has_doc(node), annotated=True,
               parent=_parent(ctx, owner), is_test=is_test)  # fmt: skip


def _field(ctx: Ctx, node: Node, owner: Node | None) -> None:
    modifiers = _modifiers(ctx, node)
    constant = "const" in modifiers or {"static", "readonly"} <= modifiers
    for declarator in _declarators(node):
        name = ctx.text(declarator.child_by_field_name("name"))
        row = declarator.start_point.row
        ctx.ident(name, "constant" if constant else "field", row, owner.start_byte if owner is not None else 0)
        if constant:
            ctx.symbol("constant", name, node.start_point.row, node.end_point.row, _visibility(modifiers, owner),
                       doc=ctx.has_doc(node), parent=_parent(ctx, owner))  # fmt: skip
