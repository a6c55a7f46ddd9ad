"""Python facts: the deepest coverage, since Python repositories are the main audience."""

from __future__ import annotations

import re

import msgspec
from tree_sitter import Node

from services.source.common import UPPER_CASE, Ctx, Scopes, captures, case_visibility, first_named, is_logger
from services.source.facts import Symbol
from services.source.stdlib import group_of

_CAPTURES = (
    ("function_definition", "function"),
    ("class_definition", "class"),
    ("decorated_definition", "decorated"),
    ("import_statement", "import"),
    ("import_from_statement", "import_from"),
    ("future_import_statement", "import_from"),
    ("assignment", "assign"),
    ("for_statement", "loop"),
    ("for_in_clause", "loop"),
    ("with_item", "with"),
    ("except_clause", "except"),
    ("except_group_clause", "except"),
    ("assert_statement", "assert"),
    ("string", "string"),
)
_CLASS = frozenset({"class_definition"})
_BROAD = frozenset({"Exception", "BaseException", "builtins.Exception", "builtins.BaseException"})
_ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "enum.Enum", "enum.IntEnum"})
_INTERFACE_BASES = frozenset({"Protocol", "typing.Protocol", "ABC", "abc.ABC"})
_EMPTY_BODY = frozenset({"pass_statement", "ellipsis", "comment"})
_STRING_PREFIX = b"rRbBuUfFtT"
_OVERLOAD = re.compile(rb"@\s*(?:[A-Za-z_][\w.]*\.)?overload\b")
_TYPE_CHECKING = re.compile(rb"(elif|if)\s+(?:[A-Za-z_]\w*\.)?TYPE_CHECKING\s*:")
# Statements that leave a handler with the error still on its way: ``raise``, ``raise X from e``.
_RAISE = frozenset({"raise_statement"})
# The compatibility libraries' ``raise X from e`` (six, future): a call that always raises.
_RAISE_CALL = re.compile(r"(?:^|\.)(?:raise_from|reraise)$")
_NESTED_SCOPES = frozenset({"function_definition", "class_definition", "lambda"})

_PRINT = re.compile(rb"(print)\s*\(")
_LOG_CALL = re.compile(rb"\.(debug|info|warning|warn|error|exception|critical|fatal|log)\s*\(")


class _File:
    """Per-file lookups shared by the node handlers."""

    def __init__(self, ctx: Ctx, caps: dict[str, list[Node]]) -> None:
        self.ctx = ctx
        self.scopes = Scopes(caps.get("function", []) + caps.get("class", []))
        # Decorators belong to the definition's span; keyed by the definition's start byte.
        self.decorated: dict[int, Node] = {}
        for node in caps.get("decorated", ()):
            definition = node.child_by_field_name("definition")
            if definition is not None:
                self.decorated[definition.start_byte] = node
        self.exported: frozenset[str] | None = None
        self.main_blocks = _main_blocks(ctx)
        self.typing_blocks = _typing_blocks(ctx)
        self.stub_file = ctx.path.endswith(".pyi")
        self._stub_classes: dict[int, bool] = {}

    def in_main_block(self, row: int) -> bool:
        return any(start <= row <= end for start, end in self.main_blocks)

    def typing_only(self, node: Node) -> bool:
        """Whether ``node`` (a definition) exists for the type checker only: a stub file, an
        ``if TYPE_CHECKING:`` block, an ``@overload``, a member of a class of bare stubs."""
        if self.stub_file:
            return True
        row = node.start_point.row
        if any(start <= row <= end for start, end in self.typing_blocks):
            return True
        decorated = self.decorated.get(node.start_byte)
        if decorated is not None and _OVERLOAD.search(self.ctx.data, decorated.start_byte, node.start_byte):
            return True
        owner = self.scopes.get(self.scopes.around(node))
        return owner is not None and owner.type == "class_definition" and self.stub_class(owner)

    def stub_class(self, node: Node) -> bool:
        """A class whose body holds only ``...`` stubs, bare annotations and docstrings, with at
        least one stub method: a shape for the type checker (a protocol, a typed proxy)."""
        known = self._stub_classes.get(node.start_byte)
        if known is None:
            known = self._stub_classes[node.start_byte] = _stub_body(node.child_by_field_name("body"))
        return known

    def owner_name(self, index: int) -> str:
        node = self.scopes.get(index)
        return self.ctx.text(node.child_by_field_name("name")) if node is not None else ""


def extract(ctx: Ctx, module: str) -> None:
    caps = captures("python", _CAPTURES, ctx.root)
    if "." in module:
        ctx.own_package = module.split(".", 1)[0]
    file = _File(ctx, caps)
    assignments = caps.get("assign", [])
    if b"__all__" in ctx.data:
        file.exported = _exported_names(file, assignments)
    for node in assignments:
        _assignment(file, node)
    for node in caps.get("loop", []) + caps.get("with", []):
        _loop_target(file, node)
    for node in caps.get("import", ()):
        _import(ctx, node)
    for node in caps.get("import_from", ()):
        _import_from(ctx, node)
    if file.typing_blocks:
        ctx.imports = [
            msgspec.structs.replace(imp, typing_only=True)
            if any(start <= imp.line - 1 <= end for start, end in file.typing_blocks)
            else imp
            for imp in ctx.imports
        ]
    for node in caps.get("class", ()):
        _class(file, node)
    for node in caps.get("function", ()):
        _function(file, node)
    for node in caps.get("except", ()):
        _except(ctx, node)
    if not ctx.is_test_file:  # asserts are how tests check; elsewhere they vanish under -O
        for node in caps.get("assert", ()):
            ctx.statement("assert", node.start_point.row)
    ctx.count_quotes(caps.get("string", ()), _STRING_PREFIX)
    _calls(file)
    _typing_directives(ctx)
    _module_symbol(ctx, module)


def _exported_names(file: _File, assignments: list[Node]) -> frozenset[str] | None:
    """Names listed in a literal module-level ``__all__``; None when there is none."""
    ctx = file.ctx
    for node in assignments:
        left = node.child_by_field_name("left")
        if left is None or ctx.text(left) != "__all__" or file.scopes.at(node.start_byte) >= 0:
            continue
        right = node.child_by_field_name("right")
        if right is not None and right.type in ("list", "tuple"):
            return frozenset(ctx.text(item).strip("\"'") for item in right.named_children if item.type == "string")
    return None


def _visibility(file: _File, name: str, top_level: bool, row: int) -> str:
    if file.in_main_block(row):
        # Defined only when the module runs as a program, never for an importer.
        return "private"
    visibility = case_visibility(name)
    exported = file.exported
    if visibility == "public" and top_level and exported is not None and name not in exported:
        return "internal"
    return visibility


def _docstring(body: Node | None) -> bool:
    first = first_named(body)
    if first is not None and first.type == "expression_statement":
        first = first_named(first)
    return first is not None and first.type == "string"


def _function(file: _File, node: Node) -> None:
    ctx = file.ctx
    name = ctx.text(node.child_by_field_name("name"))
    owner = file.scopes.around(node)
    owner_node = file.scopes.get(owner)
    in_class = owner_node is not None and owner_node.type == "class_definition"
    decorated = file.decorated.get(node.start_byte)
    outer = decorated or node
    is_static = decorated is not None and b"staticmethod" in ctx.data[decorated.start_byte : node.start_byte]
    row = node.start_point.row
    annotated = node.child_by_field_name("return_type") is not None
    params = node.child_by_field_name("parameters")
    scope = node.start_byte
    # Comments (``def f(  # type: ignore[override]``) are children of the parameter list too.
    listed = [p for p in params.named_children if p.type != "comment"] if params is not None else []
    for index, param in enumerate(listed):
        kind = param.type
        typed = kind in ("typed_parameter", "typed_default_parameter")
        if kind in ("default_parameter", "typed_default_parameter"):
            target = param.child_by_field_name("name")
        elif kind in ("identifier", "typed_parameter", "list_splat_pattern", "dictionary_splat_pattern"):
            target = param if kind == "identifier" else first_named(param)
            if target is not None and target.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                target = first_named(target)
        else:
            continue  # "/" and "*" separators
        pname = ctx.text(target)
        if index == 0 and in_class and not is_static and pname in ("self", "cls"):
            continue
        if not typed:
            annotated = False
        ctx.ident(pname, "parameter", target.start_point.row if target is not None else row, scope)
    is_test = ctx.is_test_file and name.startswith("test")
    kind = "method" if in_class else "function"
    if not (name.startswith("__") and name.endswith("__")):
        ctx.ident(name, "test_function" if is_test else kind, row)
    ctx.symbol(
        kind,
        name,
        outer.start_point.row,
        node.end_point.row,
        _visibility(file, name, owner < 0, outer.start_point.row),
        doc=_docstring(node.child_by_field_name("body")),
        annotated=annotated,
        parent=file.owner_name(owner),
        is_test=is_test,
        typing_only=file.typing_only(node),
    )


def _class(file: _File, node: Node) -> None:
    ctx = file.ctx
    name = ctx.text(node.child_by_field_name("name"))
    owner = file.scopes.around(node)
    outer = file.decorated.get(node.start_byte) or node
    kind = "class"
    bases = node.child_by_field_name("superclasses")
    written: tuple[str, ...] = ()
    if bases is not None:
        written = tuple(ctx.text(base) for base in bases.named_children if base.type != "keyword_argument")
        names = set(written)
        if names & _ENUM_BASES:
            kind = "enum"
        elif names & _INTERFACE_BASES:
            kind = "interface"
    is_test = ctx.is_test_file and name.startswith("Test")
    ctx.ident(name, "class", node.start_point.row)
    ctx.symbol(
        kind,
        name,
        outer.start_point.row,
        node.end_point.row,
        _visibility(file, name, owner < 0, outer.start_point.row),
        doc=_docstring(node.child_by_field_name("body")),
        parent=file.owner_name(owner),
        is_test=is_test,
        typing_only=file.typing_only(node) or file.stub_class(node),
        bases=written,
    )


def _stub_body(body: Node | None) -> bool:
    if body is None:
        return False
    stubs = 0
    for child in body.named_children:
        if child.type == "decorated_definition":
            child = child.child_by_field_name("definition") or child
        elif child.type == "expression_statement":
            child = first_named(child) or child
        if child.type == "function_definition":
            if not _ellipsis_body(child.child_by_field_name("body")):
                return False
            stubs += 1
        elif child.type == "assignment":
            if child.child_by_field_name("right") is not None:
                return False
        elif child.type not in ("ellipsis", "string", "pass_statement", "comment"):
            return False
    return stubs > 0


def _ellipsis_body(body: Node | None) -> bool:
    """A body of ``...`` (after an optional docstring): the stub idiom of protocols and overloads."""
    if body is None:
        return False
    kinds = []
    for child in body.named_children:
        if child.type == "expression_statement":
            child = first_named(child) or child
        if child.type not in ("comment", "string"):
            kinds.append(child.type)
    return bool(kinds) and all(kind == "ellipsis" for kind in kinds)


def _targets(left: Node) -> list[Node]:
    if left.type == "identifier":
        return [left]
    if left.type in ("pattern_list", "tuple_pattern", "list_pattern"):
        return [item for item in left.named_children if item.type == "identifier"]
    return []


def _loop_target(file: _File, node: Node) -> None:
    """Names bound by ``for hdr in headers``, ``[x for itm in items]`` and ``with open(p) as fh``
    are chosen like any variable's, so naming and vocabulary judge them too."""
    ctx = file.ctx
    if node.type == "with_item":
        value = node.child_by_field_name("value")
        left = value.child_by_field_name("alias") if value is not None and value.type == "as_pattern" else None
        if left is not None and left.type == "as_pattern_target":
            left = first_named(left)
    else:
        left = node.child_by_field_name("left")
    if left is None:
        return
    owner = file.scopes.at(node.start_byte)
    owner_node = file.scopes.get(owner)
    scope = owner_node.start_byte if owner_node is not None else 0
    for target in _targets(left):
        ctx.ident(ctx.text(target), "variable", target.start_point.row, scope)


def _assignment(file: _File, node: Node) -> None:
    ctx = file.ctx
    left = node.child_by_field_name("left")
    if left is None:
        return
    scopes = file.scopes
    owner = scopes.at(node.start_byte)
    owner_node = scopes.get(owner)
    row = node.start_point.row
    if left.type == "attribute":
        obj = left.child_by_field_name("object")
        if owner_node is not None and obj is not None and obj.type == "identifier" and ctx.text(obj) == "self":
            cls = scopes.up(owner, _CLASS)
            attr = ctx.text(left.child_by_field_name("attribute"))
            ctx.ident(attr, "attribute", row, scopes.start(cls if cls >= 0 else owner))
        return
    labels = _labels(ctx, node)
    if owner_node is not None and owner_node.type != "class_definition":
        scope = owner_node.start_byte
        for target in _targets(left):
            if ctx.text(target) in labels:
                continue
            # The target's own line: in a multi-line unpacking it is not the statement's first.
            ctx.ident(ctx.text(target), "variable", target.start_point.row, scope)  # locals: kept lean
        return
    annotation = node.child_by_field_name("type")
    final = annotation is not None and ctx.text(annotation).startswith(("Final", "typing.Final"))
    for target in _targets(left):
        name = ctx.text(target)
        if name.startswith("__") and name.endswith("__"):
            continue  # __all__, __slots__, __version__: dictated, not chosen
        at = target.start_point.row
        if owner_node is None:
            kind = "constant" if final or UPPER_CASE.match(name) else "variable"
            if name not in labels:
                ctx.ident(name, kind, at)
            ctx.symbol(
                kind,
                name,
                row,
                node.end_point.row,
                _visibility(file, name, True, row),
                annotated=annotation is not None,
            )
        else:
            if (final or UPPER_CASE.match(name)) and name not in labels:
                ctx.ident(name, "constant", at, owner_node.start_byte)
                ctx.symbol(
                    "constant",
                    name,
                    row,
                    node.end_point.row,
                    _visibility(file, name, False, row),
                    parent=file.owner_name(owner),
                )
            elif name not in labels:
                ctx.ident(name, "field", at, owner_node.start_byte)


_STRING_BODY = re.compile(rb"""[rRbBuU]?(["'])([A-Za-z_][A-Za-z0-9_]*)\1""")


def _labels(ctx: Ctx, node: Node) -> frozenset[str]:
    """Names a string of the assigned value spells: a name bound to what it labels with its own
    name (pyparsing's ``Declaration_Statement = pp.Group(...).set_name("Declaration_Statement")``
    for railroad diagrams, ``UserId = NewType("UserId", int)``, ``Point = namedtuple("Point", ...)``)
    is spelled as that label is, not cased by the repository's habit."""
    right = node.child_by_field_name("right")
    if right is None:
        return frozenset()
    return frozenset(m.group(2).decode() for m in _STRING_BODY.finditer(ctx.data, right.start_byte, right.end_byte))


def _group(ctx: Ctx, module: str) -> str:
    return group_of("python", module, relative=module.startswith("."), own_package=ctx.own_package)


def _import(ctx: Ctx, node: Node) -> None:
    row = node.start_point.row
    for child in node.children_by_field_name("name"):
        target = child.child_by_field_name("name") if child.type == "aliased_import" else child
        module = ctx.text(target)
        ctx.add_import(
            module,
            ("",),
            row,
            group=_group(ctx, module),
            optional=_optional(ctx, node),
            aliases=_aliases(ctx, [child]),
        )


def _aliases(ctx: Ctx, children: list[Node]) -> tuple[str, ...]:
    """The name each imported item binds when one of them is renamed (``import a.b as c``, ``from
    pip._internal.req import parse_requirements as _parse_requirements``), else ()."""
    if not any(c.type == "aliased_import" for c in children):
        return ()
    return tuple(
        ctx.text(c.child_by_field_name("alias") if c.type == "aliased_import" else c).split(".", 1)[0] for c in children
    )


def _import_from(ctx: Ctx, node: Node) -> None:
    if node.type == "future_import_statement":
        module = "__future__"
    else:
        module = "".join(ctx.text(node.child_by_field_name("module_name")).split())
    names: list[str] = []
    children = node.children_by_field_name("name")
    for child in children:
        target = child.child_by_field_name("name") if child.type == "aliased_import" else child
        names.append(ctx.text(target))
    if not names and any(child.type == "wildcard_import" for child in node.named_children):
        names.append("*")
    relative = module.startswith(".")
    ctx.add_import(
        module,
        tuple(names),
        node.start_point.row,
        relative=relative,
        group=_group(ctx, module),
        optional=_optional(ctx, node),
        aliases=_aliases(ctx, children),
    )


# Handlers that catch a failed import: its own classes, the broad ones, and a bare ``except:``.
_IMPORT_ERRORS = re.compile(rb"\b(?:ImportError|ModuleNotFoundError|Exception|BaseException)\b|except\s*:")


def _optional(ctx: Ctx, node: Node) -> bool:
    """Whether an import sits in the body of a ``try:`` that a handler catching ``ImportError``
    guards: ``try: import sniffio`` / ``except ModuleNotFoundError: sniffio = None`` runs without
    the module, so it is no dependency the project must provide."""
    child, parent = node, node.parent
    while parent is not None and parent.type not in _NESTED_SCOPES:
        if parent.type == "try_statement" and child.type == "block" and child == parent.child_by_field_name("body"):
            for clause in parent.named_children:
                if clause.type != "except_clause":
                    continue
                body = next((c for c in clause.named_children if c.type == "block"), None)
                end = body.start_byte if body is not None else clause.end_byte
                if _IMPORT_ERRORS.search(ctx.data, clause.start_byte, end):
                    return True
        child, parent = parent, parent.parent
    return False


def _reraises(ctx: Ctx, block: Node, *, same: bool = False) -> bool:
    """Whether a handler's body raises (``raise``, ``raise Other(...) from exc``, or its Python 2
    spelling ``six.raise_from(Other(...), exc)``): recording or translating an error and letting
    it go on is neither catching too much nor swallowing. ``same``: only a bare ``raise`` counts,
    which lets the caught exception itself go on."""
    stack = list(block.named_children)
    while stack:
        node = stack.pop()
        if node.type in _RAISE and not (same and node.named_children):
            return True
        if not same and node.type == "call" and _RAISE_CALL.search(ctx.text(node.child_by_field_name("function"))):
            return True
        if node.type not in _NESTED_SCOPES:
            stack.extend(node.named_children)
    return False


def _always_reraises(block: Node) -> bool:
    """Whether a handler's own statements end in a bare ``raise`` on every path: one at its top
    level. A ``raise`` under an ``if`` lets the other cases (Ctrl-C among them) be swallowed."""
    return any(child.type in _RAISE and not child.named_children for child in block.named_children)


def _except(ctx: Ctx, node: Node) -> None:
    row = node.start_point.row
    body = next((child for child in reversed(node.named_children) if child.type == "block"), None)
    value = node.child_by_field_name("value")
    # A bare `except:` that raises another exception still catches KeyboardInterrupt and
    # SystemExit, and turns them into that exception, and one that re-raises only sometimes
    # keeps them the other times: only a bare `raise` on every path lets them go on.
    if body is not None and (_always_reraises(body) if value is None else _reraises(ctx, body)):
        return
    caught = broad = ""
    if value is None:
        ctx.statement("bare_except", row)
    else:
        if value.type == "as_pattern":
            value = first_named(value) or value
        caught = ctx.text(value)
        types = [ctx.text(item) for item in value.named_children] if value.type == "tuple" else [caught]
        broad = next((t for t in types if t in _BROAD), "")
        if broad:
            ctx.statement("broad_except", row, broad)
    if body is not None and (value is None or broad):
        # Only a handler that catches everything and says nothing swallows: `except KeyError:
        # pass` is the EAFP idiom (contextlib.suppress spelled out; bandit's B110 does not report
        # typed handlers either) and a comment in the body says why the error does not matter.
        kinds = [child.type for child in body.named_children]
        # A comment before the first statement belongs to the clause, not to its block.
        said = any(child.type == "comment" for child in node.named_children)
        if kinds and not said and all(kind in _EMPTY_BODY and kind != "comment" for kind in kinds):
            ctx.statement("swallowed_exception", row, caught)


def _logger_style(ctx: Ctx) -> str:
    modules = {imp.module.split(".", 1)[0] for imp in ctx.imports}
    for style in ("structlog", "loguru"):
        if style in modules:
            return style
    return "logging.getLogger" if "logging" in modules else ""


# A module that tells the type checker not to hold it to annotations: mypy's inline configuration
# (``# mypy: ignore-errors``, ``# mypy: allow-untyped-defs``), pyre's whole-file ignore, or a
# ``# type: ignore`` comment alone on a line before any code (PEP 484: the whole module).
_TYPING_OFF = re.compile(
    rb"^#\s*(?:mypy:[^\n]*\b(?:ignore-errors|allow-untyped-defs)\b|pyre-ignore-all-errors\b)", re.MULTILINE
)
_MODULE_TYPE_IGNORE = re.compile(
    rb"\A(?:[ \t]*(?:#[^\n]*)?\n)*?[ \t]*#\s*type:\s*ignore\s*(?:\[[^\]\n]*\])?[ \t]*$", re.MULTILINE
)


def _typing_directives(ctx: Ctx) -> None:
    match = _TYPING_OFF.search(ctx.data) or _MODULE_TYPE_IGNORE.match(ctx.data)
    if match is not None:
        start = ctx.data.rfind(b"\n", 0, match.end()) + 1
        end = ctx.data.find(b"\n", match.end())
        line = ctx.data[start : end if end != -1 else len(ctx.data)]
        ctx.statement("typing_off", ctx.data.count(b"\n", 0, start), line.decode("utf-8", "replace").strip()[:80])


def _typing_blocks(ctx: Ctx) -> list[tuple[int, int]]:
    """Row ranges of ``if TYPE_CHECKING:`` bodies (not their ``else``), at any depth."""
    if b"TYPE_CHECKING" not in ctx.data:
        return []
    out = []
    for _, keyword in ctx.sites(_TYPE_CHECKING, 1):
        statement = keyword.parent
        body = statement.child_by_field_name("consequence") if statement is not None else None
        # ``elif TYPE_CHECKING:`` after a version test (packaging's ``from typing_extensions import
        # deprecated``) is as much for the type checker as an ``if``.
        if statement is not None and statement.type in ("if_statement", "elif_clause") and body is not None:
            out.append((body.start_point.row, body.end_point.row))
    return out


def _main_blocks(ctx: Ctx) -> list[tuple[int, int]]:
    """Row ranges of module-level ``if __name__ == "__main__":`` blocks (a program's own output)."""
    out = []
    for node in ctx.root.named_children:
        if node.type == "if_statement":
            condition = ctx.text(node.child_by_field_name("condition"))
            if "__name__" in condition and "__main__" in condition:
                out.append((node.start_point.row, node.end_point.row))
    return out


def _print_rebound(file: _File) -> bool:
    """``print`` imported (outside a ``__main__`` block) or defined at module level, as in
    ``from rich import print``: calls to it are not the builtin's."""
    ctx = file.ctx
    if any("print" in imp.names and not file.in_main_block(imp.line - 1) for imp in ctx.imports):
        return True
    return any(s.name == "print" and not s.parent and s.kind == "function" for s in ctx.symbols)


def _writes_to_stream(ctx: Ctx, call: Node) -> bool:
    """``print(..., file=sys.stderr)``, ``print(line, file=out)``: output sent to a chosen stream
    (a dev server's messages, a profiler's report) is the program's output, not a leftover."""
    arguments = call.child_by_field_name("arguments")
    if arguments is None:
        return False
    for arg in arguments.named_children:
        if arg.type == "keyword_argument" and ctx.text(arg.child_by_field_name("name")) == "file":
            return True
    return False


# A debug or verbosity level or flag: ``self.debuglevel > 0``, ``if DEBUG:``, ``if verbose:``.
_DEBUG_TEST = re.compile(r"debug|verbose|verbosity", re.IGNORECASE)
_DEFINITIONS = frozenset({"function_definition", "class_definition", "lambda"})


def _under_debug_test(ctx: Ctx, call: Node) -> bool:
    """A print in the body of an ``if`` (or ``elif``) testing a debug or verbose level or flag (a
    backport of http.client's ``if self.debuglevel > 0: print("header:", ...)``): the module's
    deliberate debug output, off unless asked for."""
    child, node = call, call.parent
    while node is not None and node.type not in _DEFINITIONS:
        if (
            node.type in ("if_statement", "elif_clause")
            and child == node.child_by_field_name("consequence")
            and _DEBUG_TEST.search(ctx.text(node.child_by_field_name("condition")))
        ):
            return True
        child, node = node, node.parent
    return False


def _calls(file: _File) -> None:
    ctx = file.ctx
    rebound: bool | None = None
    for _, node in ctx.sites(_PRINT, 1):
        parent = node.parent
        is_call = parent is not None and parent.type == "call" and parent.start_byte == node.start_byte
        if is_call and node.type == "identifier" and node.end_byte - node.start_byte == 5:
            if rebound is None:
                rebound = _print_rebound(file)
            if rebound:
                break
            if parent is not None and (_writes_to_stream(ctx, parent) or _under_debug_test(ctx, parent)):
                continue
            row = node.start_point.row
            ctx.statement("print_call", row, "main" if file.in_main_block(row) else "print")
    style: str | None = None
    for _, node in ctx.sites(_LOG_CALL, 1):
        attribute = node.parent
        if node.type != "identifier" or attribute is None or attribute.type != "attribute":
            continue
        call = attribute.parent
        if call is None or call.type != "call" or call.start_byte != attribute.start_byte:
            continue
        receiver = ctx.text(attribute.child_by_field_name("object"))
        if not is_logger(receiver):
            continue
        if style is None:
            style = _logger_style(ctx)
        detail = "logging" if receiver == "logging" else style
        row = call.start_point.row
        ctx.statement("logging_call", row, detail)
        first = first_named(call.child_by_field_name("arguments"))
        if first is not None and first.type == "string":
            prefix = ctx.data[first.start_byte : first.start_byte + 3]
            if b"f" in prefix.lower().split(b'"', 1)[0].split(b"'", 1)[0]:
                ctx.statement("fstring_log", row, detail)


def _module_symbol(ctx: Ctx, module: str) -> None:
    """One "module" symbol per file so conventions about module docstrings can be learned."""
    name = module.rsplit(".", 1)[-1]
    end = ctx.root.end_point
    last = max(end.row + (1 if end.column else 0), 1)
    ctx.symbols.insert(0, Symbol("module", name, 1, last, case_visibility(name), _docstring(ctx.root), False))
