"""C and C++ facts: names live inside declarator chains; `static` and access sections decide visibility."""

from __future__ import annotations

import re

from tree_sitter import Node

from services.source.common import UPPER_CASE, Ctx, Scopes, captures
from services.source.stdlib import group_of

_CAPTURES = (
    ("function_definition", "function"),
    ("declaration", "declaration"),
    ("field_declaration", "field"),
    ("parameter_declaration", "param"),
    ("optional_parameter_declaration", "param"),
    ("struct_specifier", "struct"),
    ("union_specifier", "struct"),
    ("class_specifier", "class"),
    ("enum_specifier", "enum"),
    ("namespace_definition", "namespace"),
    ("preproc_include", "include"),
    ("preproc_def", "define"),
    ("string_literal", "string"),
    ("raw_string_literal", "string"),
    ("type_definition", "typedef"),
    ("template_declaration", "template"),
    ("lambda_expression", "lambda"),
    ("comment", "comment"),
)
_NAMES = frozenset(
    {"identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name", "type_identifier"}
)
_WRAPPERS = frozenset({"reference_declarator", "parenthesized_declarator", "attributed_declarator"})
_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".h++", ".inl", ".ipp")
_PRINT = re.compile(rb"(printf|puts|fprintf|putchar|std::cout|std::cerr)\b")


def _declarator(node: Node | None) -> tuple[Node | None, bool]:
    """The name node at the end of a declarator chain, and whether it declares a function."""
    is_function = False
    while node is not None and node.type not in _NAMES:
        if node.type == "function_declarator":
            is_function = True
        inner = node.child_by_field_name("declarator")
        if inner is None and node.type in _WRAPPERS and node.named_child_count:
            inner = node.named_children[-1]
        node = inner
    return node, is_function


def _storage(ctx: Ctx, node: Node) -> set[str]:
    return {ctx.text(c) for c in node.children if c.type in ("storage_class_specifier", "type_qualifier")}


class _File:
    """Containers and wrappers of the file, looked up by position instead of Node.parent."""

    def __init__(self, ctx: Ctx, caps: dict[str, list[Node]]) -> None:
        self.ctx = ctx
        self.types = Scopes(
            n for kind in ("struct", "class") for n in caps.get(kind, ()) if n.child_by_field_name("body") is not None
        )
        self.functions = Scopes(caps.get("function", []) + caps.get("lambda", []))
        self.wrappers: dict[int, Node] = {}  # typedef/template around a definition, by its start
        for node in caps.get("typedef", ()):
            inner = node.child_by_field_name("type")
            if inner is not None:
                self.wrappers[inner.start_byte] = node
        for node in caps.get("template", ()):
            if node.named_child_count:
                self.wrappers[node.named_children[-1].start_byte] = node
        self.access: dict[int, list[tuple[int, str]]] = {}
        self.header = ctx.path.endswith(_HEADERS)

    def owner(self, node: Node) -> int:
        """Index of the struct/class whose body declares ``node`` (-1 for none or a local)."""
        index = self.types.around(node)
        function = self.functions.around(node)
        if function >= 0 and (index < 0 or self.functions.starts[function] > self.types.starts[index]):
            return -1
        return index

    def owner_name(self, index: int) -> str:
        node = self.types.get(index)
        return self.ctx.text(node.child_by_field_name("name")) if node is not None else ""

    def visibility(self, member: Node, index: int) -> str:
        """`public:`/`private:` sections; class members default to private, struct ones to public."""
        owner = self.types.get(index)
        if owner is None:
            return "public"
        sections = self.access.get(index)
        if sections is None:
            default = "private" if owner.type == "class_specifier" else "public"
            sections = self.access[index] = [(0, default)]
            body = owner.child_by_field_name("body")
            for child in body.named_children if body is not None else ():
                if child.type == "access_specifier":
                    sections.append((child.start_byte, self.ctx.text(child).strip().rstrip(":")))
        visibility = "public"
        for offset, word in sections:
            if offset <= member.start_byte:
                visibility = word
        return visibility


def extract(ctx: Ctx, module: str) -> None:
    caps = captures(ctx.language, _CAPTURES, ctx.root)
    for node in caps.get("comment", ()):
        ctx.doc_comment(node)  # C has no single doc syntax: any comment right above documents
    file = _File(ctx, caps)
    namespaces = {ctx.text(n.child_by_field_name("name")) for n in caps.get("namespace", ())}
    for node in caps.get("include", ()):
        path = node.child_by_field_name("path")
        if path is None:
            continue
        system = path.type == "system_lib_string"
        module_path = ctx.text(path).strip('<>"')
        group = group_of(ctx.language, module_path, relative=not system)
        ctx.add_import(module_path, ("",), node.start_point.row, relative=not system, group=group)
    for kind in ("struct", "class", "enum"):
        for node in caps.get(kind, ()):
            _type(file, node, kind)
    for node in caps.get("function", ()):
        _function(file, node, namespaces)
    for node in caps.get("declaration", []) + caps.get("field", []):
        _declaration(file, node)
    for node in caps.get("param", ()):
        name, _ = _declarator(node.child_by_field_name("declarator"))
        if name is not None and name.type == "identifier":
            ctx.ident(ctx.text(name), "parameter", name.start_point.row, node.start_byte)
    for node in caps.get("define", ()):
        if node.child_by_field_name("value") is not None and file.functions.at(node.start_byte) < 0:
            macro = ctx.text(node.child_by_field_name("name"))
            ctx.ident(macro, "constant", node.start_point.row)
            ctx.symbol("constant", macro, node.start_point.row, node.start_point.row, "public", doc=ctx.has_doc(node))
    ctx.quote_double += len(caps.get("string", ()))
    for match, node in ctx.sites(_PRINT, 1):
        if node.type in ("identifier", "qualified_identifier") and node.end_byte == match.end(1):
            ctx.statement("print_call", node.start_point.row, match.group(1).decode())


def _type(file: _File, node: Node, kind: str) -> None:
    if node.child_by_field_name("body") is None:
        return  # `struct point *p`: a use, not a definition
    ctx = file.ctx
    name = ctx.text(node.child_by_field_name("name"))
    outer = file.wrappers.get(node.start_byte, node)
    if not name and outer.type == "type_definition":  # typedef struct { ... } name_t;
        name = ctx.text(_declarator(outer.child_by_field_name("declarator"))[0])
    if not name:
        return
    owner = file.owner(node)
    ctx.ident(name, "class", node.start_point.row)
    ctx.symbol(kind, name, outer.start_point.row, outer.end_point.row, file.visibility(outer, owner),
               doc=ctx.has_doc(outer), parent=file.owner_name(owner))  # fmt: skip


def _function(file: _File, node: Node, namespaces: set[str]) -> None:
    ctx = file.ctx
    name_node, _ = _declarator(node.child_by_field_name("declarator"))
    if name_node is None:
        return
    outer = file.wrappers.get(node.start_byte, node)
    owner = file.owner(node)
    parent = file.owner_name(owner)
    name = ctx.text(name_node)
    if name_node.type == "qualified_identifier":
        scope, _, name = name.rpartition("::")
        scope = scope.rsplit("::", 1)[-1]
        if scope and scope not in namespaces:
            parent = scope
    kind = "method" if parent else "function"
    if owner >= 0:
        visibility = file.visibility(outer, owner)
    else:
        visibility = "private" if "static" in _storage(ctx, node) and not parent else "public"
    if not name.startswith(("~", "operator")) and name != parent:
        ctx.ident(name, kind, name_node.start_point.row)
    ctx.symbol(kind, name, outer.start_point.row, node.end_point.row, visibility, doc=ctx.has_doc(outer),
               annotated=True, parent=parent)  # fmt: skip


def _declaration(file: _File, node: Node) -> None:
    ctx = file.ctx
    is_field = node.type == "field_declaration"
    function = file.functions.at(node.start_byte)
    owner = file.owner(node)
    top = function < 0 and owner < 0
    storage = _storage(ctx, node)
    parent = file.owner_name(owner)
    for declarator in node.children_by_field_name("declarator"):
        name_node, is_function = _declarator(declarator)
        if name_node is None:
            continue
        name = ctx.text(name_node).rsplit("::", 1)[-1]
        row = name_node.start_point.row
        if is_function:
            if (owner >= 0 or (file.header and top)) and not name.startswith(("~", "operator")) and name != parent:
                kind = "method" if owner >= 0 else "function"
                ctx.ident(name, kind, row)
                ctx.symbol(kind, name, node.start_point.row, node.end_point.row, file.visibility(node, owner),
                           doc=ctx.has_doc(node), annotated=True, parent=parent)  # fmt: skip
            continue
        if is_field or owner >= 0:
            ctx.ident(name, "field", row, file.types.start(owner))
        elif top:
            kind = "constant" if "const" in storage or "constexpr" in storage or UPPER_CASE.match(name) else "variable"
            ctx.ident(name, kind, row)
            ctx.symbol(kind, name, node.start_point.row, node.end_point.row,
                       "private" if "static" in storage else "public", doc=ctx.has_doc(node))  # fmt: skip
        else:
            ctx.ident(name, "variable", row, file.functions.start(function))
