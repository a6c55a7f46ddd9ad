"""The facts extracted from one source file: the shared vocabulary of indexer and analyzer.

The indexer stores these per blob (so identical content is parsed once) and the analyzer
learns conventions from them and checks files under review against those conventions.
Encoded with msgspec (msgpack on disk and on the wire, JSON in the API); bump
``FACTS_SCHEMA_VERSION`` whenever a field changes meaning so stale stored facts are re-extracted.
"""

from __future__ import annotations

import msgspec

# 2: prints of a `__main__` block say "main", console.log is a print_call, typing_off statements,
#    names on their own line in multi-line unpacking, definitions of a `__main__` block private.
# 3: captures walked in source order (the first binding of a name is the first in the file).
# 4: Symbol.typing_only and Symbol.bases; a comment in a parameter list no longer unannotates;
#    handlers that re-raise are neither bare, broad nor swallowed.
# 5: a handler with a comment, or a Python handler of named exceptions, does not swallow.
# 6: Formatting.max_judged_line_length; a bare `except:` that raises another exception is bare.
# 7: print(..., file=stream) is not a print_call; a bare `except:` is exempt only when its handler
#    re-raises on every path; for/with/comprehension targets are variables.
# 8: a line that is only a mypy/ruff/flake8/pyre directive is not a long line.
# 9: a JavaScript/TypeScript method with a computed or quoted key (`[Symbol.iterator]`) names no identifier;
#    tsd's type tests (`test-d/`, `*.test-d.ts`) are tests.
# 10: Import.optional (a Python import an ``except ImportError`` guards).
# 11: a JavaScript console.log that only forwards spread arguments (`console.log(...args)`) is no print.
# 12: a shorthand key of a JavaScript object pattern (`const { node_fields } = meta`) names no identifier.
# 13: a handler that calls six's or future's raise_from/reraise re-raises (dateutil's Decimal errors).
# 14: a JSDoc block one blank line above its declaration documents it, and `@private` (`@ignore`,
#     `@internal`, ...) makes its symbol private; a `test_*.py` module outside test directories that
#     defines no test is no test file; a `#!` first line is a `shebang` statement.
# 15: Import.aliases (the names a Python `as` binds); a JavaScript/TypeScript destructuring pattern
#     binds the values of its renaming pairs, nested patterns and rest elements, in parameters too.
# 16: a trailing `# ty: ignore` (Astral's type checker) is a pragma: a line long only for it is not long.
# 17: a print in the body of an `if` testing a debug or verbose level is the module's debug output.
FACTS_SCHEMA_VERSION = 17


class Symbol(msgspec.Struct, frozen=True, array_like=True):
    """A named definition: function, method, class, constant, variable, ..."""

    kind: str  # function | method | class | interface | struct | enum | constant | variable | module
    name: str
    start_line: int  # 1-based, inclusive
    end_line: int
    visibility: str  # public | private | protected | internal
    has_docstring: bool
    has_annotations: bool  # every parameter and the return annotated (where the language allows)
    parent: str = ""  # enclosing class or module-level symbol, "" at top level
    is_test: bool = False  # a test function or test class by the language's convention
    # Exists for the type checker only (``@overload`` stubs, ``if TYPE_CHECKING:`` definitions,
    # classes of bare stubs): nothing runs it, so nobody documents it.
    typing_only: bool = False
    bases: tuple[str, ...] = ()  # a class's base classes as written ("unittest.TestCase")


class Identifier(msgspec.Struct, frozen=True, array_like=True):
    """One occurrence of a name in a binding role (where names are chosen, not merely used)."""

    name: str
    role: str  # function | method | class | constant | variable | parameter | attribute | field | test_function
    line: int


class Import(msgspec.Struct, frozen=True, array_like=True):
    module: str  # as written: "os.path", "./util", "github.com/x/y", "java.util.List"
    names: tuple[str, ...]  # names imported from it ("" when the whole module)
    line: int
    resolved_path: str = ""  # a file of the repository it resolves to, "" when external/unknown
    is_relative: bool = False
    group: str = ""  # stdlib | third_party | local, where the language lets us tell
    typing_only: bool = False  # under ``if TYPE_CHECKING:``: for the type checker, not run
    optional: bool = False  # in a ``try:`` an ``except ImportError`` guards: the code runs without it
    # The name each of ``names`` binds in the importing module when the import renames one
    # (``import numpy as np``, ``from x import f as _f``; Python), same order; () when none is.
    aliases: tuple[str, ...] = ()

    @property
    def bound(self) -> tuple[str, ...]:
        """The names the import binds: ``names`` ("" for a whole module), or their aliases."""
        return self.aliases or self.names


class Formatting(msgspec.Struct, frozen=True):
    indent_unit: str  # "space" | "tab" | "" (no indented lines)
    indent_width: int  # most common indentation step in spaces (0 for tabs/unknown)
    indented_lines: int  # lines that carry indentation (the evidence count for indent facts)
    tab_indented_lines: int
    space_indented_lines: int
    quote_double: int  # string literals delimited with "
    quote_single: int  # string literals delimited with '
    max_line_length: int
    # The longest line the line-length check judges: lines holding a URL left out, a trailing
    # pragma comment (noqa, type: ignore, eslint-disable, ...) not counted (formatting.judged).
    max_judged_line_length: int
    line_length_p95: int
    long_lines: tuple[int, ...]  # histogram of line lengths by bucket of 10 chars: [0-9], [10-19], ...
    trailing_whitespace_lines: int
    final_newline: bool
    line_ending: str  # "lf" | "crlf" | "mixed" | "none"


class Statement(msgspec.Struct, frozen=True, array_like=True):
    """An idiom occurrence the engine cares about (error handling, logging, printing...)."""

    kind: str  # bare_except | broad_except | swallowed_exception | print_call | logging_call | fstring_log | assert
    line: int
    detail: str = ""


class FileFacts(msgspec.Struct):
    path: str
    language: str  # "python", "javascript", "typescript", "tsx", "go", ... or "" when unknown
    size: int  # bytes
    lines: int
    blob_sha: str = ""
    # "" when parsed, else binary | oversized | generated | vendored | unsupported_language | invalid_encoding
    skipped: str = ""
    is_test: bool = False
    tests_for: tuple[str, ...] = ()  # module or file names this test file exercises
    module: str = ""  # dotted module name for languages that have one ("pkg.sub.mod")
    symbols: tuple[Symbol, ...] = ()
    identifiers: tuple[Identifier, ...] = ()
    imports: tuple[Import, ...] = ()
    formatting: Formatting | None = None
    statements: tuple[Statement, ...] = ()
    schema: int = FACTS_SCHEMA_VERSION


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(FileFacts)
_json_encoder = msgspec.json.Encoder()


def encode(facts: FileFacts) -> bytes:
    return _encoder.encode(facts)


def decode(data: bytes) -> FileFacts:
    return _decoder.decode(data)


def to_json(facts: FileFacts) -> bytes:
    return _json_encoder.encode(facts)
