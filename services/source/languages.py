"""Which language a file is written in, and cached tree-sitter objects per language.

Language names are the ones stored in ``FileFacts.language``; they equal the names of
``tree_sitter_language_pack`` for every language we parse ("csharp", "tsx", ...).
"""

from __future__ import annotations

import re
import threading
from functools import cache

from tree_sitter import Language, Parser, Query
from tree_sitter_language_pack import get_language as _pack_language

# Languages with a fact extractor (symbols, identifiers, imports, statements).
PARSED: frozenset[str] = frozenset(
    {
        "python", "javascript", "typescript", "tsx", "go", "java", "rust", "ruby",
        "c", "cpp", "csharp", "php", "kotlin",
    }
)  # fmt: skip

_EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".go": "go", ".java": "java", ".rs": "rust",
    ".rb": "ruby", ".rake": "ruby", ".gemspec": "ruby", ".ru": "ruby",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".hxx": "cpp", ".h++": "cpp", ".ipp": "cpp", ".inl": "cpp", ".cu": "cpp",
    ".cs": "csharp", ".php": "php", ".kt": "kotlin", ".kts": "kotlin",
    # Formatting-only languages: indentation and line facts are still worth learning.
    ".scala": "scala", ".sc": "scala", ".swift": "swift", ".lua": "lua", ".dart": "dart",
    ".sh": "bash", ".bash": "bash", ".zsh": "bash", ".ex": "elixir", ".exs": "elixir",
    ".erl": "erlang", ".hrl": "erlang", ".hs": "haskell", ".ml": "ocaml", ".mli": "ocaml",
    ".clj": "clojure", ".cljs": "clojure", ".r": "r", ".jl": "julia", ".pl": "perl",
    ".pm": "perl", ".zig": "zig", ".groovy": "groovy", ".gradle": "groovy", ".vue": "vue",
    ".svelte": "svelte", ".elm": "elm", ".nim": "nim", ".sql": "sql", ".proto": "proto",
    ".tf": "hcl", ".hcl": "hcl", ".yml": "yaml", ".yaml": "yaml", ".json": "json",
    ".toml": "toml", ".md": "markdown", ".markdown": "markdown", ".html": "html",
    ".htm": "html", ".css": "css", ".scss": "scss", ".xml": "xml", ".graphql": "graphql",
}  # fmt: skip

_FILE_NAMES: dict[str, str] = {
    "Rakefile": "ruby", "Gemfile": "ruby", "Guardfile": "ruby", "Vagrantfile": "ruby",
    "Podfile": "ruby", "Dockerfile": "dockerfile", "Makefile": "make", "GNUmakefile": "make",
    "makefile": "make", "CMakeLists.txt": "cmake", "BUILD": "starlark", "BUILD.bazel": "starlark",
    "WORKSPACE": "starlark", "Jenkinsfile": "groovy", "go.mod": "gomod", "SConstruct": "python",
    "SConscript": "python", ".bashrc": "bash", ".zshrc": "bash",
}  # fmt: skip

_SHEBANGS: tuple[tuple[str, str], ...] = (
    ("python", "python"), ("node", "javascript"), ("deno", "typescript"), ("ruby", "ruby"),
    ("bash", "bash"), ("/sh", "bash"), (" sh", "bash"), ("zsh", "bash"), ("php", "php"),
)  # fmt: skip

# C++-only syntax in a ".h" header: parsing C++ with the C grammar loses classes/namespaces.
_CPP_HEADER = re.compile(rb"^\s*(?:class|namespace|template\s*<)\b|\bstd::|\bpublic:", re.M)


def language_for(path: str, head: bytes = b"") -> str:
    """The language of ``path`` ("" when unknown); ``head`` (first bytes) disambiguates."""
    name = path.rsplit("/", 1)[-1]
    language = _FILE_NAMES.get(name)
    if language is None:
        dot = name.rfind(".")
        ext = name[dot:].lower() if dot > 0 else ""
        language = "dockerfile" if name.startswith("Dockerfile") else _EXTENSIONS.get(ext, "")
    if not language and head.startswith(b"#!"):
        first = head[: head.find(b"\n")].decode("latin-1")
        language = next((lang for marker, lang in _SHEBANGS if marker in first), "")
    if language == "c" and head and _CPP_HEADER.search(head):
        language = "cpp"
    return language


@cache
def get_language(language: str) -> Language:
    return _pack_language(language)  # type: ignore[arg-type]


_local = threading.local()


def get_parser(language: str) -> Parser:
    """A parser for ``language``, one per thread (tree-sitter parsers are not thread-safe)."""
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(language)
    if parser is None:
        parser = parsers[language] = Parser(get_language(language))
    return parser


@cache
def capture_query(language: str, captures: tuple[tuple[str, str], ...]) -> Query:
    """One alternation query capturing whole nodes by type: ``((node_type, capture), ...)``.

    A single alternation costs one tree traversal; separate structural patterns each add
    matching state per node, which measured up to twice as slow on large trees. Node types
    the grammar lacks are left out so one table can serve related grammars (JS/TS/TSX).
    """
    lang = get_language(language)
    parts = [f"({kind}) @{name}" for kind, name in captures if lang.id_for_node_kind(kind, True)]
    return Query(lang, "[" + " ".join(parts) + "]")
