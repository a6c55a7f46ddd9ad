"""Ruby facts: `private` sections for visibility, `#` comments above for docs."""

from __future__ import annotations

import re

from tree_sitter import Node

from services.source.common import Ctx, Scopes, captures, is_logger, strip_quotes
from services.source.stdlib import group_of

_CAPTURES = (
    ("class", "class"),
    ("module", "module"),
    ("method", "method"),
    ("singleton_method", "method"),
    ("assignment", "assign"),
    ("singleton_class", "singleton_class"),
    ("block", "block"),
    ("do_block", "block"),
    ("lambda", "block"),
    ("method_parameters", "params"),
    ("lambda_parameters", "params"),
    ("block_parameters", "params"),
    ("string", "string"),
    ("comment", "comment"),
)
_SECTION = re.compile(rb"(private|protected|public)[ \t]*(?:#[^\n]*)?\r?\n")
_REQUIRE = re.compile(rb"(require|require_relative|load)[ \t(]+(['\"])([^'\"\n]+)\2")
_PRINT = re.compile(rb"(puts|print|pp?)(?=[ \t(]['\"\w@:(])")
_LOG = re.compile(rb"\.\s*(debug|info|warn|error|fatal)\b")
_PARAM_KINDS = frozenset(
    {"optional_parameter", "splat_parameter", "hash_splat_parameter", "keyword_parameter", "block_parameter"}
)


class _File:
    def __init__(self, ctx: Ctx, caps: dict[str, list[Node]]) -> None:
        self.ctx = ctx
        self.containers = Scopes(caps.get("class", []) + caps.get("module", []) + caps.get("singleton_class", []))
        self.callables = Scopes(caps.get("method", []) + caps.get("block", []))
        self.sections = self._sections()

    def _sections(self) -> dict[int, list[tuple[int, str]]]:
        """Bare `private`/`protected`/`public` lines per class: (byte offset, visibility)."""
        found: dict[int, list[tuple[int, str]]] = {}
        for match, node in self.ctx.sites(_SECTION, 1):
            if node.type == "identifier" and node.end_byte == match.end(1):
                owner = self.containers.at(node.start_byte)
                if owner >= 0 and self.callables.at(node.start_byte) < 0:
                    found.setdefault(owner, []).append((node.start_byte, match.group(1).decode()))
        return found

    def name(self, index: int) -> str:
        node = self.containers.get(index)
        return self.ctx.text(node.child_by_field_name("name")) if node is not None else ""


def extract(ctx: Ctx, module: str) -> None:
    caps = captures("ruby", _CAPTURES, ctx.root)
    for node in caps.get("comment", ()):
        ctx.doc_comment(node)
    file = _File(ctx, caps)
    for kind in ("class", "module"):
        for node in caps.get(kind, ()):
            name = ctx.text(node.child_by_field_name("name"))
            ctx.ident(name, "class", node.start_point.row)
            ctx.symbol(kind, name, node.start_point.row, node.end_point.row, "public", doc=ctx.has_doc(node),
                       parent=file.name(file.containers.around(node)),
                       is_test=ctx.is_test_file and name.endswith("Test"))  # fmt: skip
    for node in caps.get("method", ()):
        _method(file, node)
    for node in caps.get("assign", ()):
        _assignment(file, node)
    for node in caps.get("params", ()):
        for param in node.named_children:
            target = param.child_by_field_name("name") if param.type in _PARAM_KINDS else param
            if target is not None and target.type == "identifier":
                ctx.ident(ctx.text(target), "parameter", target.start_point.row, node.start_byte)
    ctx.count_quotes(caps.get("string", ()))
    _sites(ctx)


def _method(file: _File, node: Node) -> None:
    ctx = file.ctx
    name = ctx.text(node.child_by_field_name("name"))
    owner = file.containers.around(node)
    visibility = "public"
    line_start = ctx.data.rfind(b"\n", 0, node.start_byte) + 1
    prefix = ctx.data[line_start : node.start_byte].strip()
    if prefix in (b"private", b"protected"):  # `private def helper`
        visibility = prefix.decode()
    elif node.type == "method":
        for offset, word in file.sections.get(owner, ()):
            if offset < node.start_byte:
                visibility = word
    if name.startswith("_"):
        visibility = "private"
    is_test = ctx.is_test_file and name.startswith("test_")
    kind = "method" if owner >= 0 or node.type == "singleton_method" else "function"
    if name != "initialize":
        ctx.ident(name, "test_function" if is_test else kind, node.start_point.row)
    ctx.symbol(kind, name, node.start_point.row, node.end_point.row, visibility, doc=ctx.has_doc(node),
               parent=file.name(owner), is_test=is_test)  # fmt: skip


def _assignment(file: _File, node: Node) -> None:
    ctx = file.ctx
    left = node.child_by_field_name("left")
    if left is None:
        return
    row = node.start_point.row
    kind = left.type
    callable_scope = file.callables.at(node.start_byte)
    owner = file.containers.at(node.start_byte)
    if kind == "constant":
        name = ctx.text(left)
        ctx.ident(name, "constant", row, file.containers.start(owner))
        if callable_scope < 0:
            ctx.symbol("constant", name, row, node.end_point.row, "public", doc=ctx.has_doc(node),
                       parent=file.name(owner))  # fmt: skip
    elif kind == "identifier":
        ctx.ident(ctx.text(left), "variable", row, file.callables.start(callable_scope))
    elif kind in ("instance_variable", "class_variable"):
        role = "attribute" if kind == "instance_variable" else "field"
        ctx.ident(ctx.text(left).lstrip("@"), role, row, file.containers.start(owner))


def _sites(ctx: Ctx) -> None:
    for match, node in ctx.sites(_REQUIRE, 1):
        if node.type == "identifier" and node.parent is not None and node.parent.type == "call":
            module = strip_quotes(match.group(3).decode("utf-8", "replace"))
            relative = match.group(1) == b"require_relative"
            ctx.add_import(module, ("",), node.start_point.row, relative=relative,
                           group=group_of("ruby", module, relative=relative))  # fmt: skip
    for match, node in ctx.sites(_PRINT, 1):
        call = node.parent
        if node.type == "identifier" and node.end_byte == match.end(1) and call is not None and call.type == "call":
            ctx.statement("print_call", node.start_point.row, match.group(1).decode())
    for _, node in ctx.sites(_LOG, 1):
        call = node.parent
        receiver = call.child_by_field_name("receiver") if call is not None and call.type == "call" else None
        if node.type == "identifier" and receiver is not None and is_logger(ctx.text(receiver)):
            ctx.statement("logging_call", node.start_point.row, ctx.text(receiver).rsplit(".", 1)[-1])
