"""Shared state and helpers of the per-language extractors.

Every extractor runs one capture query over the tree and then does a little work per
captured node; call sites (print, logging, console...) are found with a regex over the
bytes and confirmed by looking up the node at the match, which is far cheaper than
matching structural query patterns against every node of the tree.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Iterator
from operator import itemgetter

from tree_sitter import Node, QueryCursor

from services.source.facts import Identifier, Import, Statement, Symbol
from services.source.languages import capture_query

UPPER_CASE = re.compile(r"^_*[A-Z][A-Z0-9_]*$")

# Roles that are rebound over and over (x = x + 1): one identifier per scope is enough.
_DEDUPED_ROLES = frozenset({"variable", "attribute", "field", "constant"})


def captures(language: str, table: tuple[tuple[str, str], ...], root: Node) -> dict[str, list[Node]]:
    """Nodes of ``root`` captured by ``table`` (see ``capture_query``), each list in source order.

    ``QueryCursor.captures()`` lists nodes in an order that is not source order and differs
    between parses of the same bytes; extractors keep the first binding of a name they meet, so
    walking that order made the same file give different facts (a finding on another line, with
    another id). Outer nodes come before the nodes they contain that start at the same byte.
    """
    found = QueryCursor(capture_query(language, table)).captures(root)
    return {name: sorted(nodes, key=_source_order) for name, nodes in sorted(found.items())}


def _source_order(node: Node) -> tuple[int, int]:
    return node.start_byte, -node.end_byte


class Ctx:
    """What one extractor run collects, plus the parsed input it reads from."""

    def __init__(self, path: str, language: str, data: bytes, root: Node, *, is_test_file: bool) -> None:
        self.path = path
        self.language = language
        self.data = data
        self.root = root
        self.is_test_file = is_test_file
        self.symbols: list[Symbol] = []
        self.identifiers: list[Identifier] = []
        self.imports: list[Import] = []
        self.statements: list[Statement] = []
        self.quote_double = 0
        self.quote_single = 0
        self.own_package = ""  # leading package/namespace of this file, to tell local imports
        self._doc_rows: dict[int, int] = {}
        self._lines: list[bytes] | None = None
        self._seen: set[tuple[str, str, int]] = set()
        self._symbol_names: set[tuple[str, str, str]] = set()

    def text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.data[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def ident(self, name: str, role: str, row: int, scope: int = 0) -> None:
        """Record a binding; ``row`` is 0-based, ``scope`` the start byte of its scope."""
        if not name:
            return
        if role in _DEDUPED_ROLES:
            key = (name, role, scope)
            if key in self._seen:
                return
            self._seen.add(key)
        self.identifiers.append(Identifier(name, role, row + 1))

    def symbol(
        self,
        kind: str,
        name: str,
        start_row: int,
        end_row: int,
        visibility: str,
        *,
        doc: bool = False,
        annotated: bool = False,
        parent: str = "",
        is_test: bool = False,
        typing_only: bool = False,
        bases: tuple[str, ...] = (),
    ) -> None:
        if not name:
            return
        if kind in ("constant", "variable"):
            # Re-assignments (fallback imports, conditional definitions) are one symbol.
            key = (kind, name, parent)
            if key in self._symbol_names:
                return
            self._symbol_names.add(key)
        self.symbols.append(
            Symbol(
                kind, name, start_row + 1, end_row + 1, visibility, doc, annotated, parent, is_test, typing_only, bases
            )
        )

    def statement(self, kind: str, row: int, detail: str = "") -> None:
        self.statements.append(Statement(kind, row + 1, detail))

    def add_import(
        self,
        module: str,
        names: tuple[str, ...],
        row: int,
        *,
        relative: bool = False,
        group: str = "",
        optional: bool = False,
        aliases: tuple[str, ...] = (),
    ) -> None:
        if module:
            self.imports.append(
                Import(module, names or ("",), row + 1, "", relative, group, optional=optional, aliases=aliases)
            )

    # --- documentation comments -------------------------------------------------------

    def doc_comment(self, node: Node) -> None:
        """Remember a comment that can document the declaration on the line after it."""
        end = node.end_point
        # Line comments of some grammars (Rust) own their newline and end at column 0.
        row = end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row
        self._doc_rows[row] = node.start_point.column

    def has_doc(self, node: Node, blank_lines: int = 0) -> bool:
        """Whether a remembered comment ends on the line before ``node`` starts.

        The column check keeps a trailing comment of the previous statement from counting.
        """
        return self.doc_row(node, blank_lines) is not None

    def doc_row(self, node: Node, blank_lines: int = 0) -> int | None:
        """The row where the comment documenting ``node`` ends, or None. Up to ``blank_lines``
        empty lines may stand between them where the language's documentation tool attaches a
        comment across them (JSDoc does)."""
        start = node.start_point
        row = start.row - 1
        for _ in range(blank_lines + 1):
            column = self._doc_rows.get(row)
            if column is not None:
                return row if column <= start.column else None
            if row < 0 or self._line(row).strip():
                return None
            row -= 1
        return None

    def _line(self, row: int) -> bytes:
        if self._lines is None:
            self._lines = self.data.split(b"\n")
        return self._lines[row] if row < len(self._lines) else b""

    # --- strings and call sites -------------------------------------------------------

    def count_quotes(self, nodes: Iterable[Node], prefixes: bytes = b"") -> None:
        """Count string literals by their delimiter.

        Triple-quoted strings and strings that contain the other quote character do not
        count: the delimiter is forced there, not a style choice.
        """
        data = self.data
        skip = frozenset(prefixes)
        double = single = 0
        for node in nodes:
            start = node.start_byte
            quote = data[start]
            while quote in skip:
                start += 1
                quote = data[start]
            if quote == 0x22:
                double += not data.startswith(b'"""', start) and data.find(b"'", start, node.end_byte) < 0
            elif quote == 0x27:
                single += not data.startswith(b"'''", start) and data.find(b'"', start, node.end_byte) < 0
        self.quote_double += double
        self.quote_single += single

    def sites(self, pattern: re.Pattern[bytes], group: int = 0) -> Iterator[tuple[re.Match[bytes], Node]]:
        """Regex matches over the source with the smallest syntax node spanning ``group``.

        Only nodes starting exactly at the group are yielded, which drops matches inside
        longer words, strings and comments. Patterns should start with a literal: a leading
        look-behind or ``\\b`` defeats the regex engine's prefix scan (measured 20x slower).
        """
        root = self.root
        for match in pattern.finditer(self.data):
            start = match.start(group)
            node = root.descendant_for_byte_range(start, match.end(group))
            if node is not None and node.start_byte == start:
                yield match, node


def first_named(node: Node | None, skip: tuple[str, ...] = ("comment",)) -> Node | None:
    """The first named child of ``node`` that is not a comment (without listing all children)."""
    if node is None:
        return None
    for index in range(node.named_child_count):
        child = node.named_child(index)
        if child is not None and child.type not in skip:
            return child
    return None


class Scopes:
    """The innermost captured container (function, class, ...) around any byte offset.

    tree-sitter >= 0.22 keeps no parent pointers: ``Node.parent`` descends from the root, so
    walking up is O(depth^2) per node (seconds for one deeply nested stdlib file). Instead the
    captured containers are sorted once and each lookup is a bisect plus a short climb along a
    precomputed chain of enclosing containers.
    """

    def __init__(self, nodes: Iterable[Node]) -> None:
        ordered = sorted(((n.start_byte, -n.end_byte, n) for n in nodes), key=itemgetter(0, 1))
        self.nodes: list[Node] = [item[2] for item in ordered]
        self.starts: list[int] = [item[0] for item in ordered]
        self.ends: list[int] = [-item[1] for item in ordered]
        self.parents: list[int] = []
        stack: list[int] = []
        ends = self.ends
        for index, start in enumerate(self.starts):
            while stack and ends[stack[-1]] <= start:
                stack.pop()
            self.parents.append(stack[-1] if stack else -1)
            stack.append(index)

    def at(self, offset: int) -> int:
        """Index of the innermost container holding ``offset``, -1 at top level."""
        index = bisect.bisect_right(self.starts, offset) - 1
        ends, parents = self.ends, self.parents
        while index >= 0 and ends[index] <= offset:
            index = parents[index]
        return index

    def around(self, node: Node) -> int:
        """Index of the innermost container strictly around ``node`` (never ``node`` itself)."""
        start, end = node.start_byte, node.end_byte
        index = self.at(start)
        while index >= 0 and self.starts[index] == start and self.ends[index] == end:
            index = self.parents[index]
        return index

    def get(self, index: int) -> Node | None:
        return self.nodes[index] if index >= 0 else None

    def up(self, index: int, types: frozenset[str]) -> int:
        """From ``index`` outwards, the first container whose type is in ``types``."""
        nodes, parents = self.nodes, self.parents
        while index >= 0 and nodes[index].type not in types:
            index = parents[index]
        return index

    def start(self, index: int) -> int:
        """A scope key for deduplication: the container's start byte, -1 at top level."""
        return self.starts[index] if index >= 0 else -1


def case_visibility(name: str) -> str:
    """Leading-underscore convention (Python and friends); dunder names are public."""
    if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
        return "private"
    return "public"


def is_logger(receiver: str) -> bool:
    """Whether a call receiver looks like a logger: log, logger, self._log, LOGGER, ..."""
    last = receiver.rsplit(".", 1)[-1].strip("_").lower()
    return last in ("log", "logger", "logging") or last.endswith(("_log", "_logger"))


def strip_quotes(text: str) -> str:
    return text.strip().strip("\"'`")
