"""Kotlin facts. The grammar names few fields, so names are found among direct children."""

from __future__ import annotations

import re

from tree_sitter import Node

from services.source.common import UPPER_CASE, Ctx, Scopes, captures
from services.source.lang_java import catch_catch, jvm_sites
from services.source.stdlib import group_of

_CAPTURES = (
    ("package_header", "package"),
    ("class_declaration", "class"),
    ("object_declaration", "object"),
    ("function_declaration", "function"),
    ("property_declaration", "property"),
    ("companion_object", "companion"),
    ("lambda_literal", "lambda"),
    ("anonymous_function", "lambda"),
    ("parameter", "param"),
    ("class_parameter", "class_param"),
    ("import_header", "import"),
    ("catch_block", "catch"),
    ("string_literal", "string"),
    ("multiline_comment", "comment"),
)
_PRINT = re.compile(rb"(println|print)\s*\(")


def _child(node: Node, kind: str) -> Node | None:
    return next((child for child in node.named_children if child.type == kind), None)


def _modifiers(ctx: Ctx, node: Node) -> str:
    modifiers = _child(node, "modifiers")
    return ctx.text(modifiers) if modifiers is not None else ""


def _visibility(modifiers: str) -> str:
    for word in ("private", "protected", "internal"):
        if word in modifiers.split():
            return word
    return "public"


def _owner_name(ctx: Ctx, owner: Node | None) -> str:
    return ctx.text(_child(owner, "type_identifier")) if owner is not None else ""


class _File:
    def __init__(self, ctx: Ctx, caps: dict[str, list[Node]]) -> None:
        self.ctx = ctx
        self.types = Scopes(caps.get("class", []) + caps.get("object", []) + caps.get("companion", []))
        self.functions = Scopes(caps.get("function", []) + caps.get("lambda", []))
        self.top = {child.start_byte for child in ctx.root.named_children}

    def owner(self, node: Node) -> Node | None:
        """The class or object declaring ``node`` as a member (a companion counts as its class)."""
        types = self.types
        index = types.around(node)
        function = self.functions.around(node)
        if function >= 0 and (index < 0 or self.functions.starts[function] > types.starts[index]):
            return None  # declared inside a function body: a local, not a member
        if index >= 0 and types.nodes[index].type == "companion_object":
            index = types.parents[index]
        return types.get(index)


def extract(ctx: Ctx, module: str) -> None:
    caps = captures("kotlin", _CAPTURES, ctx.root)
    data = ctx.data
    for node in caps.get("comment", ()):
        if data.startswith(b"/**", node.start_byte):
            ctx.doc_comment(node)
    for node in caps.get("package", ()):
        ctx.own_package = ".".join(ctx.text(_child(node, "identifier")).split(".")[:2])
    for node in caps.get("import", ()):
        path = ctx.text(_child(node, "identifier"))
        names = ("*",) if _child(node, "wildcard_import") else (path.rsplit(".", 1)[-1],)
        group = group_of("kotlin", path, relative=False, own_package=ctx.own_package)
        ctx.add_import(path, names, node.start_point.row, group=group)
    file = _File(ctx, caps)
    for node in caps.get("class", []) + caps.get("object", []):
        _type(ctx, node, file.owner(node))
    for node in caps.get("function", ()):
        _function(ctx, node, file.owner(node))
    for node in caps.get("property", ()):
        _property(file, node)
    for node in caps.get("param", ()):
        name = _child(node, "simple_identifier")
        if name is not None:
            ctx.ident(ctx.text(name), "parameter", name.start_point.row, node.start_byte)
    for node in caps.get("class_param", ()):
        name = _child(node, "simple_identifier")
        if name is not None:
            is_property = _child(node, "binding_pattern_kind") is not None
            ctx.ident(ctx.text(name), "field" if is_property else "parameter", name.start_point.row, node.start_byte)
    for node in caps.get("catch", ()):
        catch_catch(ctx, node, ("Exception", "Throwable", "RuntimeException"))
    for node in caps.get("string", ()):
        ctx.quote_double += data.startswith(b'"', node.start_byte) and not data.startswith(b'"""', node.start_byte)
    jvm_sites(ctx)
    for match, node in ctx.sites(_PRINT, 1):
        parent = node.parent
        if node.type == "simple_identifier" and parent is not None and parent.type == "call_expression":
            ctx.statement("print_call", node.start_point.row, match.group(1).decode())


def _type(ctx: Ctx, node: Node, owner: Node | None) -> None:
    name = ctx.text(_child(node, "type_identifier"))
    modifiers = _modifiers(ctx, node)
    kind = "class"
    if any(child.type == "interface" for child in node.children):
        kind = "interface"
    elif "enum" in modifiers.split() or any(child.type == "enum" for child in node.children):
        kind = "enum"
    is_test = ctx.is_test_file and name.endswith(("Test", "Tests", "Spec"))
    ctx.ident(name, "class", node.start_point.row)
    ctx.symbol(kind, name, node.start_point.row, node.end_point.row, _visibility(modifiers),
               doc=ctx.has_doc(node), parent=_owner_name(ctx, owner), is_test=is_test)  # fmt: skip


def _function(ctx: Ctx, node: Node, owner: Node | None) -> None:
    name = ctx.text(_child(node, "simple_identifier"))
    modifiers = _modifiers(ctx, node)
    is_test = "@Test" in modifiers or (ctx.is_test_file and owner is not None and name.startswith("test"))
    kind = "method" if owner is not None else "function"
    ctx.ident(name, "test_function" if is_test else kind, node.start_point.row)
    ctx.symbol(kind, name, node.start_point.row, node.end_point.row, _visibility(modifiers),
               doc=ctx.has_doc(node), annotated=True, parent=_owner_name(ctx, owner),
               is_test=is_test)  # fmt: skip


def _property(file: _File, node: Node) -> None:
    ctx = file.ctx
    declaration = _child(node, "variable_declaration")
    targets = [declaration] if declaration is not None else []
    multi = _child(node, "multi_variable_declaration")
    if multi is not None:
        targets = [c for c in multi.named_children if c.type == "variable_declaration"]
    modifiers = _modifiers(ctx, node)
    owner = file.owner(node)
    top = node.start_byte in file.top
    row = node.start_point.row
    for target in targets:
        name = ctx.text(_child(target, "simple_identifier"))
        const = "const" in modifiers.split() or (bool(UPPER_CASE.match(name)) and (top or owner is not None))
        if top or owner is not None:
            kind = "constant" if const else ("variable" if top else "field")
            ctx.ident(name, kind, row, owner.start_byte if owner is not None else 0)
            if kind != "field":
                ctx.symbol(kind, name, row, node.end_point.row, _visibility(modifiers),
                           doc=ctx.has_doc(node), parent=_owner_name(ctx, owner))  # fmt: skip
        else:
            ctx.ident(name, "variable", row, file.functions.start(file.functions.at(node.start_byte)))
