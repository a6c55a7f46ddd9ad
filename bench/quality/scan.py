"""The benchmark's own reading of source text, independent of the engine's scanners.

* ``layout``: where comments and string literals are (Python through the standard library's
  ``tokenize``; JavaScript/TypeScript through a small hand-written lexer that also knows template
  literals and regular-expression literals), and the indentation step a file uses.
* ``python_summary``: from the standard library's ``ast``, the public symbols with their docstring
  and annotations, bare ``except:`` clauses, ``print()`` calls in library code, and the places
  where a bare except or a print can be planted.
"""

from __future__ import annotations

import ast
import io
import posixpath
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, field

# --- files -----------------------------------------------------------------------------------

_TEST_DIRS = frozenset({"test", "tests", "__tests__"})
_PROGRAM_DIRS = frozenset({"scripts", "examples", "tools", "demo", "demos", "bin"})
_PROGRAM_FILES = frozenset({"__main__.py", "setup.py"})
_PROGRAM_FUNCTIONS = frozenset({"main", "_main"})
_NOT_MODULES = frozenset({"__init__", "__main__", "index"})
SOURCE_EXTENSIONS = (".py", ".js", ".mjs", ".cjs", ".ts", ".tsx")
JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})


def is_test_path(path: str) -> bool:
    """A test file: under a ``test``/``tests``/``__tests__``/``*_test(s)`` directory, or named
    ``test_*``, ``*_test``, ``*.test.*``, ``*.spec.*``."""
    parts = path.split("/")
    base = parts[-1]
    stem = base.split(".", 1)[0]
    dirs = parts[:-1]
    if _TEST_DIRS & set(dirs) or any(d.endswith(("_test", "_tests")) for d in dirs):
        return True
    return stem.startswith("test_") or stem.endswith("_test") or ".test." in base or ".spec." in base


def tested_name(path: str) -> str:
    """The module a test file is named after (``test_parser.py``, ``parser.spec.ts`` -> parser)."""
    base = posixpath.basename(path)
    stem = base.split(".", 1)[0]
    if stem.startswith("test_"):
        stem = stem[5:]
    elif stem.endswith("_test"):
        stem = stem[:-5]
    return stem.lower()


def is_module(path: str) -> bool:
    """A source module a test could be written for (not a package marker or entry point)."""
    stem = posixpath.basename(path).split(".", 1)[0]
    return path.endswith(SOURCE_EXTENSIONS) and stem not in _NOT_MODULES and not is_test_path(path)


def is_library_module(path: str) -> bool:
    """A module a test could be asked for: public (PEP 8, "Public and internal interfaces": a
    leading underscore marks an internal module) library code, not a program or a doc page."""
    stem = posixpath.basename(path).split(".", 1)[0]
    return is_module(path) and not stem.startswith("_") and not is_program(path) and "docs" not in path.split("/")[:-1]


def is_program(path: str) -> bool:
    """A file run as a program, where printing is how it talks."""
    return posixpath.basename(path) in _PROGRAM_FILES or bool(_PROGRAM_DIRS & set(path.split("/")[:-1]))


def python_module(path: str) -> str:
    """Dotted module name of a Python file relative to the corpus root."""
    stem = path[:-3] if path.endswith(".py") else path
    if stem.endswith("/__init__"):
        stem = stem[: -len("/__init__")]
    return stem.replace("/", ".")


# --- layout ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Literal:
    line: int
    start: int  # column of the opening quote
    end: int  # column after the closing quote
    quote: str
    body: str


@dataclass
class Layout:
    ok: bool = True
    interior: set[int] = field(default_factory=set)  # lines continuing a multi-line string or comment
    comment_col: dict[int, int] = field(default_factory=dict)
    literals: list[Literal] = field(default_factory=list)  # one-line ' and " strings (not triple)


def layout(text: str, language: str) -> Layout:
    if language == "python":
        return _python_layout(text)
    if language in ("javascript", "typescript", "tsx"):
        return _js_layout(text)
    return Layout(ok=False)


def _python_layout(text: str) -> Layout:
    out = Layout()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            (row, col), (end_row, end_col) = tok.start, tok.end
            if tok.type == tokenize.COMMENT:
                out.comment_col.setdefault(row, col)
            elif tok.type == tokenize.STRING:
                if end_row > row:
                    out.interior.update(range(row + 1, end_row + 1))
                    continue
                s = tok.string
                q = min(i for i in (s.find("'"), s.find('"')) if i >= 0)
                if s[q : q + 3] in ('"""', "'''"):
                    continue
                out.literals.append(Literal(row, col + q, end_col, s[q], s[q + 1 : -1]))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return Layout(ok=False)
    return out


_REGEX_AFTER = frozenset("(,=:[!&|?{};+-*%<>~^")
_REGEX_WORDS = frozenset({"return", "typeof", "case", "in", "of", "void", "delete", "throw", "new", "else", "yield"})


def _js_layout(text: str) -> Layout:
    out = Layout()
    n = len(text)
    i = 0
    line = 1
    line_start = 0
    prev = ""  # last significant character outside tokens
    word = ""  # last identifier, for "return /re/"

    def span(start: int, end: int) -> None:
        nonlocal line, line_start
        inner = text.count("\n", start, end)
        if inner:
            out.interior.update(range(line + 1, line + inner + 1))
            line += inner
            line_start = text.rfind("\n", 0, end) + 1

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            line_start = i + 1
            i += 1
        elif c in " \t\r":
            i += 1
        elif text.startswith("//", i):
            out.comment_col.setdefault(line, i - line_start)
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            out.comment_col.setdefault(line, i - line_start)
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            span(i, j)
            i = j
        elif c in "'\"":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            body = text[i + 1 : j]
            if "\n" in body:  # an escaped line break continues the string
                span(i, j)
            else:
                col = i - line_start
                out.literals.append(Literal(line, col, col + j + 1 - i, c, body))
            i = j + 1
            prev, word = "a", ""
        elif c == "`":
            j = i + 1
            depth = 0
            while j < n:
                ch = text[j]
                if ch == "\\":
                    j += 2
                    continue
                if depth == 0 and ch == "`":
                    break
                if depth == 0 and text.startswith("${", j):
                    depth, j = 1, j + 2
                    continue
                if depth:
                    depth += (ch == "{") - (ch == "}")
                j += 1
            span(i, j)
            i = j + 1
            prev, word = "a", ""
        elif c == "/" and (prev in _REGEX_AFTER or prev == "" or word in _REGEX_WORDS):
            j = i + 1
            in_class = False
            while j < n and text[j] != "\n":
                ch = text[j]
                if ch == "\\":
                    j += 2
                    continue
                if ch == "[":
                    in_class = True
                elif ch == "]":
                    in_class = False
                elif ch == "/" and not in_class:
                    break
                j += 1
            j += 1
            while j < n and text[j].isalpha():
                j += 1
            i = j
            prev, word = "a", ""
        elif c.isalnum() or c in "_$":
            j = i
            while j < n and (text[j].isalnum() or text[j] in "_$"):
                j += 1
            word = text[i:j]
            prev = "a"
            i = j
        else:
            prev, word = c, ""
            i += 1
    return out


def indent_width(text: str, scan: Layout) -> int | None:
    """The commonest step by which a code line is indented deeper than the code line before it,
    for files indented with spaces (None with tabs or fewer than five steps)."""
    steps: Counter[int] = Counter()
    previous = 0
    for number, line in enumerate(text.split("\n"), 1):
        if (
            not line.strip()
            or number in scan.interior
            or scan.comment_col.get(number) == len(line) - len(line.lstrip())
        ):
            continue
        if line[:1] == "\t":
            return None
        depth = len(line) - len(line.lstrip(" "))
        if depth > previous:
            steps[depth - previous] += 1
        previous = depth
    if sum(steps.values()) < 5:
        return None
    return steps.most_common(1)[0][0]


# --- Python structure -------------------------------------------------------------------------


@dataclass
class Public:
    """A public symbol (PEP 8, "Public and internal interfaces"): a module-level function or class
    listed in ``__all__`` when the module has one, else any without a leading underscore, and
    the methods of such a class without a leading underscore (so no dunders)."""

    kind: str  # function | method | class
    name: str
    line: int  # the `def`/`class` line
    first: int  # first line (decorators included)
    body: int  # line of the first body statement
    documented: bool
    doc: tuple[int, int] = (0, 0)  # lines of the docstring
    alone: bool = False  # the docstring is the whole body
    annotated: bool = False  # functions: the return and every parameter but self/cls annotated
    returns: tuple[int, int, int, int] | None = None  # return annotation: line, col, end line, end col
    parent: str = ""  # enclosing class of a method
    overloaded: bool = False  # has @overload signatures (not counted for annotations)


@dataclass
class PySummary:
    ok: bool = True
    public: list[Public] = field(default_factory=list)
    bare_except: bool = False
    library_print: bool = False
    handlers: list[int] = field(default_factory=list)  # lines of one-line `except Name:` headers
    returns: list[int] = field(default_factory=list)  # a `return` line of each library function


_SKIP_DECORATORS = re.compile(r"(^|\.)(overload|setter|deleter)$")
_TYPED_HANDLER = re.compile(r"\s*except\s+[\w.]+\s*:\s*$")
_RETURN_LINE = re.compile(r"\s+return\b")


def _decorators(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> list[str]:
    return [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]


def _public(node: ast.stmt, kind: str) -> Public | None:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or node.name.startswith("_"):
        return None
    if any(_SKIP_DECORATORS.search(d) for d in _decorators(node)):
        return None
    first_stmt = node.body[0]
    doc = (
        isinstance(first_stmt, ast.Expr)
        and isinstance(first_stmt.value, ast.Constant)
        and isinstance(first_stmt.value.value, str)
    )
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    p = Public(kind, node.name, node.lineno, first, first_stmt.lineno, doc)
    if doc:
        p.doc = (first_stmt.lineno, first_stmt.end_lineno or first_stmt.lineno)
        p.alone = len(node.body) == 1
    if not isinstance(node, ast.ClassDef):
        a = node.args
        params = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]
        if kind == "method" and params and params[0].arg in ("self", "cls", "mcs", "metacls"):
            params = params[1:]
        p.annotated = node.returns is not None and all(x.annotation is not None for x in params)
        r = node.returns
        if r is not None:
            p.returns = (r.lineno, r.col_offset, r.end_lineno or r.lineno, r.end_col_offset or 0)
    return p


def _dunder_all(body: list[ast.stmt]) -> set[str] | None:
    """The names a module lists in ``__all__`` (None when it has none)."""
    out: set[str] | None = None
    for node in body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(node, ast.AugAssign | ast.AnnAssign):
            target = node.target
        if not (isinstance(target, ast.Name) and target.id == "__all__") or node.value is None:
            continue
        if isinstance(node.value, ast.List | ast.Tuple):
            names = {e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            out = names if out is None or not isinstance(node, ast.AugAssign) else out | names
    return out


def _overloaded(body: list[ast.stmt]) -> set[tuple[str, str]]:
    return {
        ("", x.name)
        for x in body
        if isinstance(x, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(_SKIP_DECORATORS.search(d) and d.endswith("overload") for d in _decorators(x))
    }


def _main_guard(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


def python_summary(text: str, path: str) -> PySummary:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return PySummary(ok=False)
    out = PySummary()
    lines = text.split("\n")
    test = is_test_path(path)
    library = not test and not is_program(path)
    if not test:
        overloaded = _overloaded(tree.body)
        exported = _dunder_all(tree.body)
        for node in tree.body:
            p = _public(node, "function" if not isinstance(node, ast.ClassDef) else "class")
            if p is None or (exported is not None and p.name not in exported):
                continue
            out.public.append(p)
            if isinstance(node, ast.ClassDef):
                methods = [_public(x, "method") for x in node.body if not isinstance(x, ast.ClassDef)]
                for m in methods:
                    if m is not None:
                        m.parent = node.name
                        out.public.append(m)
                overloaded |= {(node.name, name) for _, name in _overloaded(node.body)}
        # An overloaded function's signatures are in its @overload stubs: its implementation's
        # annotations are optional (PEP 484), so it is not counted for annotations.
        for p in out.public:
            if p.kind != "class" and (p.parent, p.name) in overloaded:
                p.annotated = False
                p.returns = None
                p.overloaded = True

    def visit(node: ast.AST, in_program: bool) -> None:
        for child in ast.iter_child_nodes(node):
            program = in_program
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                program = in_program or child.name in _PROGRAM_FUNCTIONS
                if library and not program:
                    at = next((r for r in _own_returns(child) if _RETURN_LINE.match(lines[r - 1])), 0)
                    if at:
                        out.returns.append(at)
            elif node is tree and _main_guard(child):
                program = True
            elif isinstance(child, ast.ExceptHandler):
                if child.type is None:
                    out.bare_except = True
                elif _TYPED_HANDLER.fullmatch(lines[child.lineno - 1]):
                    out.handlers.append(child.lineno)
            elif (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Name)
                and child.func.id == "print"
                and library
                and not program
            ):
                out.library_print = True
            visit(child, program)

    visit(tree, False)
    return out


def _own_returns(function: ast.AST) -> list[int]:
    """Lines of the ``return`` statements of ``function`` itself (not of functions inside it)."""
    out: list[int] = []
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            out.append(node.lineno)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            stack.extend(ast.iter_child_nodes(node))
    return sorted(out)


# --- JavaScript/TypeScript summary ------------------------------------------------------------

_JS_OUTPUT = re.compile(r"\bconsole\s*\.\s*(?:log|info|debug|dir|table|trace)\s*\(")
# An exported top-level function or class declaration (ES modules); JSDoc is a /** */ block
# ending on the line before it.
_JS_EXPORT = re.compile(
    r"^export\s+(?:default\s+)?(?:declare\s+)?(?:(?:async\s+)?function\*?|(?:abstract\s+)?class)\s+(\w+)"
)
_JS_RETURN = re.compile(r"^(\s+)return\b")


@dataclass
class JsPublic:
    kind: str  # function | class
    name: str
    line: int
    documented: bool
    doc: tuple[int, int] = (0, 0)  # lines of the JSDoc block


@dataclass
class JsSummary:
    ok: bool = True
    library_print: bool = False  # console.log and kin in code (not strings or comments)
    returns: list[int] = field(default_factory=list)  # indented `return` lines
    public: list[JsPublic] = field(default_factory=list)  # exported top-level declarations


def js_summary(text: str, lay: Layout) -> JsSummary:
    """What the idiom truth needs of a JavaScript/TypeScript file, read from its code only."""
    if not lay.ok:
        return JsSummary(ok=False)
    spans: dict[int, list[tuple[int, int]]] = {}
    for lit in lay.literals:
        spans.setdefault(lit.line, []).append((lit.start, lit.end))
    out = JsSummary()
    lines = text.split("\n")
    for no, line in enumerate(lines, start=1):
        if no in lay.interior:
            continue
        export = _JS_EXPORT.match(line)
        if export is not None:
            kind = "class" if " class " in line[: export.end()] else "function"
            doc = _jsdoc_before(lines, no)
            out.public.append(JsPublic(kind, export.group(1), no, doc is not None, doc or (0, 0)))
        code = line[: lay.comment_col.get(no, len(line))]
        for start, end in sorted(spans.get(no, ()), reverse=True):
            code = code[:start] + " " * (end - start) + code[end:]
        if "`" in code:
            continue  # a template literal opens here: its text is not code
        if _JS_OUTPUT.search(code):
            out.library_print = True
        if _JS_RETURN.match(code):
            out.returns.append(no)
    return out


def _jsdoc_before(lines: list[str], no: int) -> tuple[int, int] | None:
    """Lines of the /** */ block ending right above line ``no`` (1-based), if there is one."""
    end = no - 1
    if end < 1 or not lines[end - 1].rstrip().endswith("*/"):
        return None
    start = end
    while start >= 1 and not lines[start - 1].lstrip().startswith("/*"):
        start -= 1
    if start < 1 or not lines[start - 1].lstrip().startswith("/**"):
        return None
    return start, end
