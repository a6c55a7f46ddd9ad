"""JavaScript, TypeScript and TSX facts (one extractor: the grammars share node types)."""

from __future__ import annotations

import re

from tree_sitter import Node

from services.source.common import UPPER_CASE, Ctx, Scopes, captures, strip_quotes
from services.source.stdlib import group_of

_CAPTURES = (
    ("function_declaration", "function"),
    ("generator_function_declaration", "function"),
    ("function_expression", "lambda"),
    ("function", "lambda"),
    ("generator_function", "lambda"),
    ("arrow_function", "lambda"),
    ("class_declaration", "class"),
    ("abstract_class_declaration", "class"),
    ("class", "class"),
    ("method_definition", "method"),
    ("function_signature", "signature"),
    ("method_signature", "signature"),
    ("interface_declaration", "interface"),
    ("enum_declaration", "enum"),
    ("type_alias_declaration", "type"),
    ("lexical_declaration", "declaration"),
    ("variable_declaration", "declaration"),
    ("public_field_definition", "field"),
    ("field_definition", "field"),
    ("import_statement", "import"),
    ("export_statement", "export"),
    ("formal_parameters", "params"),
    ("jsx_attribute", "jsx_attribute"),
    ("catch_clause", "catch"),
    ("string", "string"),
    ("comment", "comment"),
)
_FUNCTIONS = frozenset(
    {"function_declaration", "generator_function_declaration", "function_expression", "function",
     "generator_function", "arrow_function", "method_definition"}
)  # fmt: skip
_CLASSES = frozenset({"class_declaration", "abstract_class_declaration", "class"})
_TYPED = frozenset({"typescript", "tsx"})
_PARAM_KINDS = frozenset({"required_parameter", "optional_parameter"})

_CONSOLE = re.compile(rb"console\s*\.\s*(\w+)\s*\(")
_CONSOLE_OUTPUT = frozenset({"log", "info", "debug", "dir", "table", "trace"})
_THIS_ASSIGN = re.compile(rb"this\s*\.\s*(#?[A-Za-z_$][\w$]*)\s*=(?![=>])")
_REQUIRE = re.compile(rb"(require|import)\s*\(\s*([\'\"`])([^\'\"`\n]+)\2\s*\)")
_CJS_EXPORT = re.compile(rb"exports\.([A-Za-z_$][\w$]*)\s*=(?!=)")
_CJS_EXPORT_ALL = re.compile(rb"module\.exports\s*=\s*(\{[^}]*\}|[A-Za-z_$][\w$]*)")
_NAME = re.compile(rb"[A-Za-z_$][\w$]*")
# JSDoc's (and TypeScript's ``stripInternal``) tags that keep a symbol out of the documented API.
_HIDDEN_TAG = re.compile(rb"@(?:private|protected|package|ignore|internal)\b")
# JSDoc attaches a ``/** ... */`` block to the next declaration across a blank line (mocha's
# reporters keep one between a method's block and the method).
_DOC_GAP = 1


class _File:
    """Per-file lookups: containers, top-level statements, exports (no Node.parent walks)."""

    def __init__(self, ctx: Ctx, caps: dict[str, list[Node]]) -> None:
        self.ctx = ctx
        self.scopes = Scopes(caps.get("function", []) + caps.get("lambda", []) + caps.get("class", [])
                             + caps.get("method", []))  # fmt: skip
        self.top: set[int] = {child.start_byte for child in ctx.root.named_children}
        self.export_of: dict[int, Node] = {}  # declaration start byte -> its export statement
        for node in caps.get("export", ()):
            for field in ("declaration", "value"):
                child = node.child_by_field_name(field)
                if child is not None:
                    self.export_of[child.start_byte] = node
                    self.top.add(child.start_byte)
        self.exported = _exported(ctx, caps.get("export", []))
        self.value_names: dict[int, str] = {}  # function/class expression start -> variable name
        self.hidden_rows: set[int] = set()  # end rows of doc comments that tag their symbol hidden

    def documented(self, node: Node) -> bool:
        return self.ctx.has_doc(node, _DOC_GAP)

    def hidden(self, node: Node) -> bool:
        """Whether the doc comment of ``node`` tags it ``@private`` (or ``@ignore``, ...): an
        author's word that the symbol is not public API, as a leading underscore is."""
        row = self.ctx.doc_row(node, _DOC_GAP)
        return row is not None and row in self.hidden_rows

    def owner_name(self, index: int) -> str:
        """Name of the nearest named container at or outside ``index``."""
        scopes = self.scopes
        while index >= 0:
            node = scopes.nodes[index]
            name = node.child_by_field_name("name")
            if name is not None:
                return self.ctx.text(name)
            if node.start_byte in self.value_names:
                return self.value_names[node.start_byte]
            index = scopes.parents[index]
        return ""

    def public(self, node: Node, name: str) -> bool:
        return node.start_byte in self.export_of or name in self.exported


def extract(ctx: Ctx, module: str) -> None:
    caps = captures(ctx.language, _CAPTURES, ctx.root)
    data = ctx.data
    file = _File(ctx, caps)
    for node in caps.get("comment", ()):
        if data.startswith(b"/**", node.start_byte):
            ctx.doc_comment(node)
            if _HIDDEN_TAG.search(data, node.start_byte, node.end_byte):
                file.hidden_rows.add(node.end_point.row)
    for node in caps.get("import", ()):
        _import(ctx, node, node.child_by_field_name("source"))
    for node in caps.get("export", ()):
        source = node.child_by_field_name("source")
        if source is not None:
            _import(ctx, node, source)
    for node in caps.get("declaration", ()):
        _declaration(file, node)
    for kind in ("class", "interface", "enum", "function"):
        for node in caps.get(kind, ()):
            if node.child_by_field_name("name") is not None:
                _named(file, node, kind)
    for node in caps.get("type", ()):
        ctx.ident(ctx.text(node.child_by_field_name("name")), "class", node.start_point.row)
    for node in caps.get("method", ()):
        _method(file, node)
    for node in caps.get("signature", ()):
        _signature(file, node)
    for node in caps.get("field", ()):
        name = node.child_by_field_name("name") or node.child_by_field_name("property")
        if name is not None:
            owner = file.scopes.around(node)
            ctx.ident(ctx.text(name), "field", node.start_point.row, file.scopes.start(owner))
    for node in caps.get("params", ()):
        _parameters(ctx, node)
    for node in caps.get("catch", ()):
        body = node.child_by_field_name("body")
        # An empty catch swallows; one holding a comment says why (ESLint's no-empty allows it).
        if body is not None and not body.named_children:
            ctx.statement("swallowed_exception", node.start_point.row)
    # JSX attribute values follow HTML habits (double quotes), not the code's quote style.
    jsx = {child.start_byte for node in caps.get("jsx_attribute", ()) for child in node.named_children}
    strings = caps.get("string", [])
    ctx.count_quotes([node for node in strings if node.start_byte not in jsx] if jsx else strings)
    _sites(file)


def _exported(ctx: Ctx, exports: list[Node]) -> set[str]:
    """Names exported by ``export { a, b as c }``, ``export default x`` and CommonJS."""
    names: set[str] = set()
    for node in exports:
        for child in node.named_children:
            if child.type == "export_clause":
                for spec in child.named_children:
                    names.add(ctx.text(spec.child_by_field_name("name")))
            elif child.type == "identifier":
                names.add(ctx.text(child))
    data = ctx.data
    if b"exports" in data:
        names.update(m.group(1).decode() for m in _CJS_EXPORT.finditer(data))
        for match in _CJS_EXPORT_ALL.finditer(data):
            names.update(n.decode() for n in _NAME.findall(match.group(1)))
    return names


def _annotated(ctx: Ctx, fn: Node, *, needs_return: bool = True) -> bool:
    if ctx.language not in _TYPED:
        return False
    params = fn.child_by_field_name("parameters")
    if params is None:  # `x => x`: a bare identifier parameter is never typed
        return False
    for param in params.named_children:
        if param.type in _PARAM_KINDS and param.child_by_field_name("type") is None:
            return False
    return not needs_return or fn.child_by_field_name("return_type") is not None


def _named(file: _File, node: Node, kind: str) -> None:
    ctx = file.ctx
    name = ctx.text(node.child_by_field_name("name"))
    top = node.start_byte in file.top
    outer = file.export_of.get(node.start_byte, node)
    ctx.ident(name, "function" if kind == "function" else "class", node.start_point.row)
    ctx.symbol(
        kind,
        name,
        outer.start_point.row,
        node.end_point.row,
        "public" if top and file.public(node, name) and not file.hidden(outer) else "private",
        doc=file.documented(outer),
        annotated=kind == "function" and _annotated(ctx, node),
        parent="" if top else file.owner_name(file.scopes.around(node)),
    )


def _method(file: _File, node: Node) -> None:
    ctx = file.ctx
    name_node = node.child_by_field_name("name")
    name = ctx.text(name_node)
    visibility = "public"
    if (name_node is not None and name_node.type == "private_property_identifier") or file.hidden(node):
        visibility = "private"
    else:
        for child in node.children:
            if child.type == "accessibility_modifier":
                visibility = ctx.text(child).strip()
                break
    # A computed key (``[Symbol.iterator]``, ``get [Symbol.toStringTag]``) or a quoted one is named
    # by the language or a protocol, not cased by the author.
    named = name_node is not None and name_node.type in ("property_identifier", "private_property_identifier")
    if name != "constructor" and named:
        ctx.ident(name, "method", node.start_point.row)
    needs_return = name != "constructor" and not any(c.type == "set" for c in node.children[:3])
    ctx.symbol(
        "method",
        name,
        node.start_point.row,
        node.end_point.row,
        visibility,
        doc=file.documented(node),
        annotated=_annotated(ctx, node, needs_return=needs_return),
        parent=file.owner_name(file.scopes.around(node)),
    )


def _signature(file: _File, node: Node) -> None:
    """A TypeScript overload signature (``export function zipAll<T>(): ...;``) or an interface
    member: typing only, but its JSDoc and types describe the implementation of the same name."""
    ctx = file.ctx
    name = ctx.text(node.child_by_field_name("name"))
    outer = file.export_of.get(node.start_byte, node)
    top = node.start_byte in file.top
    method = node.type == "method_signature"
    if method:
        visibility = next((ctx.text(c).strip() for c in node.children if c.type == "accessibility_modifier"), "public")
    else:
        visibility = "public" if top and file.public(node, name) else "private"
    if file.hidden(outer):
        visibility = "private"
    ctx.symbol(
        "method" if method else "function",
        name,
        outer.start_point.row,
        node.end_point.row,
        visibility,
        doc=file.documented(outer),
        annotated=_annotated(ctx, node),
        parent="" if top else file.owner_name(file.scopes.around(node)),
        typing_only=True,
    )


def _declaration(file: _File, node: Node) -> None:
    """`const`/`let`/`var` declarations: module-level ones are symbols, the rest identifiers."""
    ctx = file.ctx
    top = node.start_byte in file.top
    is_const = node.child_count > 0 and node.children[0].type == "const"
    scope = file.scopes.start(file.scopes.at(node.start_byte))
    outer = file.export_of.get(node.start_byte, node)
    for declarator in node.named_children:
        if declarator.type != "variable_declarator":
            continue
        name_node = declarator.child_by_field_name("name")
        value = declarator.child_by_field_name("value")
        row = declarator.start_point.row
        if name_node is None:
            continue
        if name_node.type != "identifier":  # destructuring: const [a, b] = pair
            for item in _pattern_names(name_node):
                ctx.ident(ctx.text(item), "variable", item.start_point.row, scope)  # its own line
            continue
        name = ctx.text(name_node)
        is_function = value is not None and value.type in _FUNCTIONS
        if value is not None and (is_function or value.type == "class"):
            file.value_names[value.start_byte] = name
        if not top and not is_function:
            ctx.ident(name, "variable", row, scope)
            continue
        if is_function:
            kind = "function"
        elif is_const and (UPPER_CASE.match(name) or value is None or value.type != "call_expression"):
            kind = "constant"
        else:
            kind = "variable"
        ctx.ident(name, kind, row)
        ctx.symbol(
            kind,
            name,
            outer.start_point.row,
            declarator.end_point.row,
            "public" if top and file.public(node, name) and not file.hidden(outer) else "private",
            doc=file.documented(outer),
            annotated=is_function and _annotated(ctx, value),  # type: ignore[arg-type]
            parent="" if top else file.owner_name(file.scopes.at(node.start_byte)),
        )


def _pattern_names(node: Node) -> list[Node]:
    """The identifiers a destructuring pattern binds that the author named. `const { node_fields }
    = meta` spells a key of the object (a data format's, an API's) and names nothing; an array
    pattern, a rest element and the value of a renaming pair (`const {options: sourceOptions} =
    ...`, execa's pipe arguments) are names the author chose, at any depth."""
    out: list[Node] = []
    stack = [node]
    while stack:
        item = stack.pop()
        kind = item.type
        if kind == "identifier":
            out.append(item)
        elif kind == "pair_pattern":
            value = item.child_by_field_name("value")
            if value is not None:
                stack.append(value)
        elif kind in ("assignment_pattern", "object_assignment_pattern"):
            left = item.child_by_field_name("left")
            if left is not None:
                stack.append(left)
        elif kind in ("object_pattern", "array_pattern", "rest_pattern"):
            stack.extend(reversed(item.named_children))
    return out


def _parameters(ctx: Ctx, node: Node) -> None:
    scope = node.start_byte
    for param in node.named_children:
        target: Node | None = param
        if param.type in _PARAM_KINDS:
            target = param.child_by_field_name("pattern")
        if target is None:
            continue
        for name in _pattern_names(target):
            ctx.ident(ctx.text(name), "parameter", name.start_point.row, scope)


def _import(ctx: Ctx, node: Node, source: Node | None) -> None:
    module = strip_quotes(ctx.text(source))
    names: list[str] = []
    clause = next((c for c in node.named_children if c.type in ("import_clause", "export_clause")), None)
    for child in clause.named_children if clause is not None else ():
        if child.type == "identifier":
            names.append("default")
        elif child.type == "namespace_import":
            names.append("*")
        elif child.type in ("named_imports", "export_clause"):
            names.extend(ctx.text(spec.child_by_field_name("name")) for spec in child.named_children)
        elif child.type in ("import_specifier", "export_specifier"):
            names.append(ctx.text(child.child_by_field_name("name")))
    if node.type == "export_statement" and clause is None:
        names.append("*")
    _add(ctx, module, tuple(names), node.start_point.row)


def _add(ctx: Ctx, module: str, names: tuple[str, ...], row: int) -> None:
    relative = module.startswith(".")
    group = group_of(ctx.language, module, relative=relative)
    ctx.add_import(module, names, row, relative=relative, group=group)


def _forwards(call: Node) -> bool:
    args = call.child_by_field_name("arguments")
    return (
        args is not None and args.named_child_count > 0 and all(a.type == "spread_element" for a in args.named_children)
    )


def _sites(file: _File) -> None:
    ctx = file.ctx
    data = ctx.data
    if b"console" in data:
        for match, node in ctx.sites(_CONSOLE, 1):
            member = node.parent
            call = member.parent if member is not None and member.type == "member_expression" else None
            if node.type == "property_identifier" and call is not None and call.type == "call_expression":
                method = match.group(1).decode()
                # console.log and kin print, as print() does in Python; warn/error report problems.
                # A call that only forwards spread arguments (yargs's logger: `console.log(...args)`)
                # is a wrapper's output channel, not a print left in.
                kind = "print_call" if method in _CONSOLE_OUTPUT and not _forwards(call) else "console_call"
                ctx.statement(kind, node.start_point.row, f"console.{method}")
    if b"this" in data:
        for match, node in ctx.sites(_THIS_ASSIGN, 1):
            member = node.parent
            if member is None or member.type != "member_expression":
                continue
            assign = member.parent
            if assign is not None and assign.type == "assignment_expression":
                owner = file.scopes.up(file.scopes.at(assign.start_byte), _CLASSES)
                ctx.ident(match.group(1).decode(), "attribute", node.start_point.row, file.scopes.start(owner))
    for match, node in ctx.sites(_REQUIRE, 1):
        call = node.parent
        if call is not None and call.type == "call_expression" and call.start_byte == node.start_byte:
            _add(ctx, match.group(3).decode("utf-8", "replace"), ("",), node.start_point.row)
