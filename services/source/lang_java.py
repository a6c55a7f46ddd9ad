"""Java facts: modifiers for visibility, Javadoc for docs, @Test for tests."""

from __future__ import annotations

import re

from tree_sitter import Node

from services.source.common import Ctx, Scopes, captures, is_logger
from services.source.stdlib import group_of

_CAPTURES = (
    ("package_declaration", "package"),
    ("class_declaration", "class"),
    ("record_declaration", "class"),
    ("interface_declaration", "interface"),
    ("annotation_type_declaration", "interface"),
    ("enum_declaration", "enum"),
    ("method_declaration", "method"),
    ("constructor_declaration", "method"),
    ("field_declaration", "field"),
    ("constant_declaration", "field"),
    ("local_variable_declaration", "local"),
    ("lambda_expression", "lambda"),
    ("formal_parameter", "param"),
    ("spread_parameter", "param"),
    ("catch_clause", "catch"),
    ("import_declaration", "import"),
    ("string_literal", "string"),
    ("block_comment", "comment"),
)
_WORD = re.compile(r"[@\w]+")
_TEST_ANNOTATIONS = frozenset({"@Test", "@ParameterizedTest", "@RepeatedTest", "@TestFactory", "@Property"})
_PRINT = re.compile(rb"System\s*\.\s*(?:out|err)\s*\.\s*print(?:ln|f)?\s*\(")
_LOG = re.compile(
    rb"\.\s*(trace|debug|info|warn|warning|error|fatal|severe|Log(?:Trace|Debug|Information|Warning|Error|Critical))\s*\("
)


def modifier_words(ctx: Ctx, node: Node) -> set[str]:
    for child in node.children:
        if child.type == "modifiers":
            return set(_WORD.findall(ctx.text(child)))
    return set()


def extract(ctx: Ctx, module: str) -> None:
    caps = captures("java", _CAPTURES, ctx.root)
    data = ctx.data
    types = Scopes(caps.get("class", []) + caps.get("interface", []) + caps.get("enum", []))
    callables = Scopes(caps.get("method", []) + caps.get("lambda", []))
    for node in caps.get("comment", ()):
        if data.startswith(b"/**", node.start_byte):
            ctx.doc_comment(node)
    for node in caps.get("package", ()):
        ctx.own_package = ".".join(ctx.text(node.named_children[0]).split(".")[:2]) if node.named_children else ""
    for node in caps.get("import", ()):
        path = "".join(ctx.text(c) for c in node.named_children if c.type != "asterisk")
        wildcard = any(c.type == "asterisk" for c in node.named_children)
        names = ("*",) if wildcard else (path.rsplit(".", 1)[-1],)
        group = group_of("java", path, relative=False, own_package=ctx.own_package)
        ctx.add_import(path, names, node.start_point.row, group=group)
    for kind in ("class", "interface", "enum"):
        for node in caps.get(kind, ()):
            _type(ctx, node, kind, types.get(types.around(node)))
    for node in caps.get("method", ()):
        _method(ctx, node, types.get(types.around(node)))
    for node in caps.get("field", ()):
        _field(ctx, node, types.get(types.around(node)))
    for node in caps.get("local", ()):
        scope = callables.start(callables.at(node.start_byte))
        for declarator in node.children_by_field_name("declarator"):
            name = declarator.child_by_field_name("name")
            ctx.ident(ctx.text(name), "variable", node.start_point.row, scope)
    for node in caps.get("param", ()):
        name_node = node.child_by_field_name("name")
        if name_node is None:  # spread parameter: String... rest
            spread = next((c for c in node.named_children if c.type == "variable_declarator"), None)
            name_node = spread.child_by_field_name("name") if spread is not None else None
        if name_node is not None:
            ctx.ident(ctx.text(name_node), "parameter", name_node.start_point.row, node.start_byte)
    for node in caps.get("catch", ()):
        catch_catch(ctx, node, ("Exception", "Throwable", "RuntimeException"))
    ctx.quote_double += len(caps.get("string", ()))
    jvm_sites(ctx)


def catch_catch(ctx: Ctx, node: Node, broad: tuple[str, ...]) -> None:
    """broad_except / swallowed_exception for a Java/C#-style catch clause."""
    text = ctx.text(node)
    head = text[: text.find("{")] if "{" in text else text
    caught = next((name for name in broad if re.search(rf"\b{name}\b", head)), "")
    row = node.start_point.row
    if caught:
        ctx.statement("broad_except", row, caught)
    body = node.child_by_field_name("body") or next(
        (c for c in reversed(node.named_children) if c.type in ("block", "statements")), None
    )
    # Kotlin drops the `statements` node of an empty catch block altogether.
    empty = body is None if node.type == "catch_block" else body is not None
    # A comment in the block says why the error does not matter (Checkstyle's EmptyCatchBlock).
    if empty and not (body.named_children if body else ()):
        ctx.statement("swallowed_exception", row, caught)


def jvm_sites(ctx: Ctx) -> None:
    data = ctx.data
    if b"System" in data:
        for _, node in ctx.sites(_PRINT):
            if node.type in ("method_invocation", "field_access", "call_expression", "navigation_expression"):
                ctx.statement("print_call", node.start_point.row, "System.out")
    for _, node in ctx.sites(_LOG, 1):
        call = node.parent
        if node.type not in ("identifier", "simple_identifier") or call is None:
            continue
        receiver = call.child_by_field_name("object") or call.child_by_field_name("expression")
        if receiver is None and call.type == "navigation_suffix" and call.prev_named_sibling is not None:
            receiver = call.prev_named_sibling  # Kotlin: (navigation_expression receiver (navigation_suffix name))
        if receiver is not None and is_logger(ctx.text(receiver)):
            ctx.statement("logging_call", node.start_point.row, ctx.text(receiver).rsplit(".", 1)[-1])


def _visibility(words: set[str], owner: Node | None) -> str:
    for word in ("public", "private", "protected"):
        if word in words:
            return word
    if owner is not None and owner.type in ("interface_declaration", "annotation_type_declaration"):
        return "public"
    return "internal"  # package-private


def _type(ctx: Ctx, node: Node, kind: str, owner: Node | None) -> None:
    name = ctx.text(node.child_by_field_name("name"))
    words = modifier_words(ctx, node)
    is_test = ctx.is_test_file and (name.endswith(("Test", "Tests", "IT")) or name.startswith("Test"))
    ctx.ident(name, "class", node.start_point.row)
    ctx.symbol(
        kind,
        name,
        node.start_point.row,
        node.end_point.row,
        _visibility(words, owner),
        doc=ctx.has_doc(node),
        parent=ctx.text(owner.child_by_field_name("name")) if owner is not None else "",
        is_test=is_test,
    )


def _method(ctx: Ctx, node: Node, owner: Node | None) -> None:
    name = ctx.text(node.child_by_field_name("name"))
    words = modifier_words(ctx, node)
    is_test = bool(words & _TEST_ANNOTATIONS) or (ctx.is_test_file and name.startswith("test"))
    if node.type == "method_declaration":
        ctx.ident(name, "test_function" if is_test else "method", node.start_point.row)
    ctx.symbol(
        "method",
        name,
        node.start_point.row,
        node.end_point.row,
        _visibility(words, owner),
        doc=ctx.has_doc(node),
        annotated=True,
        parent=ctx.text(owner.child_by_field_name("name")) if owner is not None else "",
        is_test=is_test,
    )


def _field(ctx: Ctx, node: Node, owner: Node | None) -> None:
    words = modifier_words(ctx, node)
    in_interface = owner is not None and owner.type == "interface_declaration"
    constant = in_interface or {"static", "final"} <= words
    parent = ctx.text(owner.child_by_field_name("name")) if owner is not None else ""
    for declarator in node.children_by_field_name("declarator"):
        name = ctx.text(declarator.child_by_field_name("name"))
        row = declarator.start_point.row
        if constant:
            ctx.ident(name, "constant", row, owner.start_byte if owner else 0)
            ctx.symbol("constant", name, node.start_point.row, node.end_point.row,
                       _visibility(words, owner), doc=ctx.has_doc(node), parent=parent)  # fmt: skip
        else:
            ctx.ident(name, "field", row, owner.start_byte if owner else 0)
