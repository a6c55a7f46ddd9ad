"""PHP facts: visibility modifiers, PHPDoc `/** */`, type hints as annotations."""

from __future__ import annotations

import re

from tree_sitter import Node

from services.source.common import Ctx, Scopes, captures, strip_quotes
from services.source.stdlib import group_of

_CAPTURES = (
    ("namespace_definition", "namespace"),
    ("class_declaration", "class"),
    ("trait_declaration", "class"),
    ("interface_declaration", "interface"),
    ("enum_declaration", "enum"),
    ("function_definition", "function"),
    ("method_declaration", "method"),
    ("const_declaration", "const"),
    ("property_declaration", "property"),
    ("anonymous_function", "lambda"),
    ("arrow_function", "lambda"),
    ("simple_parameter", "param"),
    ("variadic_parameter", "param"),
    ("property_promotion_parameter", "param"),
    ("assignment_expression", "assign"),
    ("namespace_use_clause", "use"),
    ("string", "string"),
    ("encapsed_string", "string"),
    ("catch_clause", "catch"),
    ("comment", "comment"),
)
_REQUIRE = re.compile(rb"(?:require|include)(?:_once)?\s*\(?\s*(['\"])([^'\"\n]+)\1")
_PRINT = re.compile(rb"(echo|print|var_dump|print_r|printf)\b")
_PARAMS = frozenset({"simple_parameter", "variadic_parameter", "property_promotion_parameter"})


def _visibility(ctx: Ctx, node: Node) -> str:
    for child in node.children:
        if child.type == "visibility_modifier":
            return ctx.text(child).strip()
    return "public"


def _parent(ctx: Ctx, owner: Node | None) -> str:
    return ctx.text(owner.child_by_field_name("name")) if owner is not None else ""


def _annotated(node: Node) -> bool:
    params = node.child_by_field_name("parameters")
    if params is not None:
        for param in params.named_children:
            if param.type in _PARAMS and param.child_by_field_name("type") is None:
                return False
    name = node.child_by_field_name("name")
    is_constructor = name is not None and name.text == b"__construct"
    return is_constructor or node.child_by_field_name("return_type") is not None


def extract(ctx: Ctx, module: str) -> None:
    caps = captures("php", _CAPTURES, ctx.root)
    data = ctx.data
    types = Scopes([n for kind in ("class", "interface", "enum") for n in caps.get(kind, ())])
    callables = Scopes(caps.get("function", []) + caps.get("method", []) + caps.get("lambda", []))
    for node in caps.get("comment", ()):
        if data.startswith(b"/**", node.start_byte):
            ctx.doc_comment(node)
    for node in caps.get("namespace", ()):
        ctx.own_package = ctx.text(node.child_by_field_name("name")).split("\\", 1)[0]
    for node in caps.get("use", ()):
        target = next((c for c in node.named_children if c.type in ("qualified_name", "name")), None)
        path = ctx.text(target).lstrip("\\")
        alias = ctx.text(node.child_by_field_name("alias"))
        group = group_of("php", path, relative=False, own_package=ctx.own_package)
        ctx.add_import(path, (alias or path.rsplit("\\", 1)[-1],), node.start_point.row, group=group)
    for kind in ("class", "interface", "enum"):
        for node in caps.get(kind, ()):
            name = ctx.text(node.child_by_field_name("name"))
            ctx.ident(name, "class", node.start_point.row)
            ctx.symbol(kind, name, node.start_point.row, node.end_point.row, "public", doc=ctx.has_doc(node),
                       is_test=ctx.is_test_file and name.endswith("Test"))  # fmt: skip
    for node in caps.get("function", []) + caps.get("method", []):
        _callable(ctx, node, types.get(types.around(node)))
    for node in caps.get("const", ()):
        _constants(ctx, node, types.get(types.around(node)))
    for node in caps.get("property", ()):
        scope = types.start(types.around(node))
        for element in node.named_children:
            if element.type == "property_element":
                name = ctx.text(element.child_by_field_name("name")).lstrip("$")
                ctx.ident(name, "field", element.start_point.row, scope)
    for node in caps.get("param", ()):
        variable = node.child_by_field_name("name")
        if variable is not None:
            ctx.ident(ctx.text(variable).lstrip("$&."), "parameter", variable.start_point.row, node.start_byte)
    for node in caps.get("assign", ()):
        left = node.child_by_field_name("left")
        if left is not None and left.type == "variable_name":
            name = ctx.text(left).lstrip("$")
            ctx.ident(name, "variable", node.start_point.row, callables.start(callables.at(node.start_byte)))
    ctx.count_quotes(caps.get("string", ()), b"bB")
    for node in caps.get("catch", ()):
        _catch(ctx, node)
    _sites(ctx)


def _callable(ctx: Ctx, node: Node, owner: Node | None) -> None:
    name = ctx.text(node.child_by_field_name("name"))
    kind = "method" if node.type == "method_declaration" else "function"
    is_test = kind == "method" and ctx.is_test_file and name.startswith("test")
    if not name.startswith("__"):
        ctx.ident(name, "test_function" if is_test else kind, node.start_point.row)
    ctx.symbol(kind, name, node.start_point.row, node.end_point.row, _visibility(ctx, node),
               doc=ctx.has_doc(node), annotated=_annotated(node), parent=_parent(ctx, owner),
               is_test=is_test)  # fmt: skip


def _constants(ctx: Ctx, declaration: Node, owner: Node | None) -> None:
    for element in declaration.named_children:
        if element.type != "const_element":
            continue
        name = ctx.text(next((c for c in element.named_children if c.type == "name"), None))
        ctx.ident(name, "constant", element.start_point.row, owner.start_byte if owner is not None else 0)
        ctx.symbol("constant", name, declaration.start_point.row, declaration.end_point.row,
                   _visibility(ctx, declaration), doc=ctx.has_doc(declaration), parent=_parent(ctx, owner))  # fmt: skip


def _catch(ctx: Ctx, node: Node) -> None:
    text = ctx.text(node)
    head = text[: text.find("{")]
    row = node.start_point.row
    caught = next((t for t in ("Throwable", "Exception") if re.search(rf"\\?\b{t}\b(?!\w)", head)), "")
    if caught and not re.search(rf"\w{caught}\b", head):
        ctx.statement("broad_except", row, caught)
    body = node.child_by_field_name("body")
    if body is not None and all(child.type == "comment" for child in body.named_children):
        ctx.statement("swallowed_exception", row, caught)


def _sites(ctx: Ctx) -> None:
    for match, node in ctx.sites(_REQUIRE, 2):
        if node.type in ("string_content", "string", "encapsed_string"):
            module = strip_quotes(match.group(2).decode("utf-8", "replace"))
            ctx.add_import(module, ("",), node.start_point.row, relative=True, group="local")
    for match, node in ctx.sites(_PRINT, 1):
        parent = node.parent
        if parent is not None and parent.type in ("echo_statement", "print_intrinsic", "function_call_expression"):
            ctx.statement("print_call", node.start_point.row, match.group(1).decode())
