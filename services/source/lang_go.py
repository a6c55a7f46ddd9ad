"""Go facts: exported-ness by capitalization, doc comments are the comment lines above."""

from __future__ import annotations

import re

from tree_sitter import Node

from services.source.common import Ctx, Scopes, captures, strip_quotes
from services.source.stdlib import group_of

_CAPTURES = (
    ("function_declaration", "function"),
    ("method_declaration", "method"),
    ("func_literal", "lambda"),
    ("type_declaration", "type"),
    ("const_declaration", "const"),
    ("var_declaration", "var"),
    ("short_var_declaration", "short"),
    ("parameter_declaration", "param"),
    ("variadic_parameter_declaration", "param"),
    ("import_spec", "import"),
    ("interpreted_string_literal", "string"),
    ("raw_string_literal", "string"),
    ("comment", "comment"),
)
_ASSIGNMENTS = frozenset({"assignment_statement", "short_var_declaration"})
_TEST_NAME = re.compile(r"^(?:Test|Benchmark|Example|Fuzz)(?:[A-Z_0-9]|$)")
_RECEIVER_TYPE = re.compile(r"(\w+)\s*(?:\[[^\]]*\])?\s*$")
_BLANK_ASSIGN = re.compile(rb"(_)\s*(?::=|=(?!=))")
_PRINT = re.compile(rb"(fmt\.Print(?:ln|f)?|println|print)\s*\(")
_LOG = re.compile(rb"(s?log)\.(\w+)\s*\(")


def _visibility(name: str) -> str:
    return "public" if name[:1].isupper() else "private"


def extract(ctx: Ctx, module: str) -> None:
    caps = captures("go", _CAPTURES, ctx.root)
    scopes = Scopes(caps.get("function", []) + caps.get("method", []) + caps.get("lambda", []))
    for node in caps.get("comment", ()):
        ctx.doc_comment(node)
    for node in caps.get("import", ()):
        path = strip_quotes(ctx.text(node.child_by_field_name("path")))
        alias = ctx.text(node.child_by_field_name("name"))
        group = group_of("go", path, relative=path.startswith("."))
        ctx.add_import(path, (alias,), node.start_point.row, relative=path.startswith("."), group=group)
    for node in caps.get("function", ()):
        _function(ctx, node, "")
    for node in caps.get("method", ()):
        receiver = ctx.text(node.child_by_field_name("receiver")).strip("()")
        match = _RECEIVER_TYPE.search(receiver)
        _function(ctx, node, match.group(1) if match else "")
    for node in caps.get("type", ()):
        _types(ctx, node, top=scopes.at(node.start_byte) < 0)
    for kind, key in (("constant", "const"), ("variable", "var")):
        for node in caps.get(key, ()):
            _specs(ctx, node, kind, scopes.start(scopes.at(node.start_byte)))
    for node in caps.get("short", ()):
        left = node.child_by_field_name("left")
        scope = scopes.start(scopes.at(node.start_byte))
        for item in left.named_children if left is not None else ():
            name = ctx.text(item)
            if name != "_":
                ctx.ident(name, "variable", item.start_point.row, scope)
    for node in caps.get("param", ()):
        for name_node in node.children_by_field_name("name"):
            ctx.ident(ctx.text(name_node), "parameter", name_node.start_point.row, node.start_byte)
    data = ctx.data
    ctx.quote_double += sum(1 for node in caps.get("string", ()) if data[node.start_byte] == 0x22)  # not `raw`
    _sites(ctx)


def _function(ctx: Ctx, node: Node, receiver: str) -> None:
    name = ctx.text(node.child_by_field_name("name"))
    is_test = ctx.is_test_file and bool(_TEST_NAME.match(name))
    kind = "method" if receiver else "function"
    ctx.ident(name, "test_function" if is_test else kind, node.start_point.row)
    ctx.symbol(
        kind,
        name,
        node.start_point.row,
        node.end_point.row,
        _visibility(name),
        doc=ctx.has_doc(node),
        annotated=True,
        parent=receiver,
        is_test=is_test,
    )


def _types(ctx: Ctx, declaration: Node, *, top: bool) -> None:
    specs = [c for c in declaration.named_children if c.type in ("type_spec", "type_alias")]
    for spec in specs:
        name = ctx.text(spec.child_by_field_name("name"))
        ctx.ident(name, "class", spec.start_point.row)
        body = spec.child_by_field_name("type")
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(body.type if body else "", "")
        if kind == "struct":
            fields = next((c for c in body.named_children if c.type == "field_declaration_list"), None)  # type: ignore[union-attr]
            for field in fields.named_children if fields is not None else ():
                for field_name in field.children_by_field_name("name"):
                    ctx.ident(ctx.text(field_name), "field", field_name.start_point.row, spec.start_byte)
        if not kind or not top:
            continue
        # A lone spec is documented above `type`; grouped specs each above themselves.
        documented = spec if len(specs) > 1 else declaration
        ctx.symbol(kind, name, documented.start_point.row, spec.end_point.row, _visibility(name),
                   doc=ctx.has_doc(documented))  # fmt: skip


def _specs(ctx: Ctx, declaration: Node, kind: str, scope: int) -> None:
    specs: list[Node] = []
    for child in declaration.named_children:
        if child.type == "var_spec_list":  # var ( ... ) groups its specs one level deeper
            specs.extend(c for c in child.named_children if c.type == "var_spec")
        elif child.type in ("const_spec", "var_spec"):
            specs.append(child)
    for spec in specs:
        for name_node in spec.children_by_field_name("name"):
            name = ctx.text(name_node)
            if name == "_":
                continue
            row = name_node.start_point.row
            if scope >= 0:
                ctx.ident(name, "constant" if kind == "constant" else "variable", row, scope)
                continue
            ctx.ident(name, kind, row)
            documented = spec if len(specs) > 1 else declaration
            ctx.symbol(kind, name, row, spec.end_point.row, _visibility(name), doc=ctx.has_doc(documented))


def _sites(ctx: Ctx) -> None:
    data = ctx.data
    if b"_" in data:
        for _, node in ctx.sites(_BLANK_ASSIGN, 1):
            if node.type != "identifier" or node.end_byte - node.start_byte != 1:
                continue
            targets = node.parent
            statement = targets.parent if targets is not None else None
            if targets is None or statement is None or statement.type not in _ASSIGNMENTS:
                continue
            right = statement.child_by_field_name("right")
            last = targets.named_children[-1] if targets.named_child_count else None
            call = right.named_children[0] if right is not None and right.named_child_count == 1 else None
            # `_ = f()` / `v, _ := f()`: the dropped last result is, by Go convention, an error.
            if (
                last is not None
                and last.start_byte == node.start_byte
                and call is not None
                and call.type == "call_expression"
            ):
                ctx.statement("ignored_error", node.start_point.row, ctx.text(call.child_by_field_name("function")))
    for match, node in ctx.sites(_PRINT, 1):
        if node.type in ("identifier", "selector_expression") and node.end_byte == match.end(1):
            ctx.statement("print_call", node.start_point.row, match.group(1).decode())
    if b"log." in data:
        for match, node in ctx.sites(_LOG, 1):
            if node.type in ("package_identifier", "identifier") and node.end_byte == match.end(1):
                ctx.statement("logging_call", node.start_point.row, match.group(1).decode())
