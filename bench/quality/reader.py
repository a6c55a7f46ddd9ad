"""The benchmark's own parser: identifiers, imports and definitions of a file, without the engine.

Python is read with the standard library's ``ast``; JavaScript/TypeScript with regular
expressions over the code once comments, strings, templates and regular-expression literals are
blanked (by the benchmark's own lexer). Imports are resolved across the repository by the
language's own rules (Python packages and relative imports; ``./x`` with the usual extensions
and ``index`` files). Case styles and word splitting are the benchmark's own too.

Nothing here comes from ``services/``: an independent reviewer's reading of the code, so that an
extractor bug in the engine cannot hide a violation from both sides.
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass, field

# --- names ------------------------------------------------------------------------------------

SNAKE, CAMEL, PASCAL, UPPER, DUNDER, NONE = "snake_case", "camelCase", "PascalCase", "UPPER_CASE", "dunder", "none"
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b|_)|[A-Z]?[a-z]+|[A-Z]+|\d+")


def case_style(name: str) -> str:
    """snake_case, camelCase, PascalCase, UPPER_CASE, dunder, or none (one lowercase word and
    names without letters, which fit snake_case and camelCase alike)."""
    if name.startswith("__") and name.endswith("__") and len(name) > 4:
        return DUNDER
    core = name.strip("_$")
    if not core or not any(c.isalpha() for c in core):
        return NONE
    if core.isupper():
        return UPPER if ("_" in core or len(core) > 1) else PASCAL
    if "_" in core:
        return SNAKE if core.islower() or not any(c.isupper() for c in core) else NONE
    if core[0].isupper():
        return PASCAL
    if any(c.isupper() for c in core):
        return CAMEL
    return NONE


def fits(style: str, wanted: str) -> bool:
    """A name of ``style`` follows a convention of ``wanted`` (one lowercase word fits both
    snake_case and camelCase)."""
    return style == wanted or (style == NONE and wanted in (SNAKE, CAMEL))


def words(name: str) -> list[str]:
    """Lowercase words of an identifier: ``parseHTTPResponse`` -> parse, http, response."""
    return [w.lower() for part in name.split("_") for w in _WORDS.findall(part) if w]


def convert(name: str, style: str) -> str:
    """``name`` written in ``style``, keeping leading underscores."""
    lead = name[: len(name) - len(name.lstrip("_"))]
    ws = words(name)
    if not ws:
        return name
    if style == SNAKE:
        out = "_".join(ws)
    elif style == UPPER:
        out = "_".join(ws).upper()
    elif style == CAMEL:
        out = ws[0] + "".join(w.capitalize() for w in ws[1:])
    else:
        out = "".join(w.capitalize() for w in ws)
    return lead + out


def replace_word(name: str, index: int, new: str) -> str:
    """``name`` with its ``index``-th word spelled ``new``, in the name's own case."""
    lead = name[: len(name) - len(name.lstrip("_"))]
    ws = words(name)
    if index >= len(ws):
        return name
    ws[index] = new
    style = case_style(name)
    if style == UPPER:
        return lead + "_".join(ws).upper()
    if style in (CAMEL, PASCAL):
        first = ws[0].capitalize() if style == PASCAL else ws[0]
        return lead + first + "".join(w.capitalize() for w in ws[1:])
    return lead + "_".join(ws)


# --- facts ------------------------------------------------------------------------------------


@dataclass(slots=True)
class Ident:
    name: str
    role: str  # function | test_function | method | class | parameter | variable | constant | attribute
    line: int


@dataclass(slots=True)
class Import:
    module: str  # as written: "os.path", ".models", "./utils", "lodash"
    names: tuple[str, ...]
    line: int
    relative: bool
    resolved: str = ""  # the repository file it names, when it names one


@dataclass(slots=True)
class Definition:
    kind: str  # function | method | class
    name: str
    line: int


@dataclass
class Facts:
    path: str
    language: str
    lines: int
    ok: bool = True
    identifiers: list[Ident] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    definitions: list[Definition] = field(default_factory=list)


def language_of(path: str) -> str:
    if path.endswith(".py"):
        return "python"
    if path.endswith((".js", ".mjs", ".cjs", ".jsx")):
        return "javascript"
    if path.endswith(".tsx"):
        return "tsx"
    if path.endswith(".ts"):
        return "typescript"
    return ""


def read(path: str, text: str, is_test: bool = False) -> Facts:
    lang = language_of(path)
    out = Facts(path, lang, text.count("\n") + (0 if text.endswith("\n") else 1))
    if lang == "python":
        _python(out, text, is_test)
    elif lang:
        _js(out, text, is_test)
    else:
        out.ok = False
    return out


# --- Python -----------------------------------------------------------------------------------


def _targets(node: ast.AST) -> list[ast.Name | ast.Attribute]:
    if isinstance(node, (ast.Tuple, ast.List)):
        return [t for elt in node.elts for t in _targets(elt)]
    if isinstance(node, ast.Starred):
        return _targets(node.value)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return [node]
    return []


def _python(out: Facts, text: str, is_test: bool) -> None:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        out.ok = False
        return
    add = out.identifiers.append

    def params(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> None:
        a = fn.args
        every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]
        for i, arg in enumerate(every):
            if method and i == 0 and arg.arg in ("self", "cls", "mcs", "metacls"):
                continue
            add(Ident(arg.arg, "parameter", arg.lineno))

    def body(nodes: list[ast.stmt], where: str) -> None:
        for node in nodes:
            visit(node, where)

    def visit(node: ast.AST, where: str) -> None:
        # where: module | class | function
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            method = where == "class"
            role = "method" if method else "function"
            if is_test and node.name.startswith("test"):
                role = "test_function"
            if where != "function":
                add(Ident(node.name, role, node.lineno))
                out.definitions.append(Definition("method" if method else "function", node.name, node.lineno))
            else:
                add(Ident(node.name, "function", node.lineno))
            params(node, method)
            body(node.body, "function")
            return
        if isinstance(node, ast.ClassDef):
            add(Ident(node.name, "class", node.lineno))
            if where == "module":
                out.definitions.append(Definition("class", node.name, node.lineno))
            body(node.body, "class")
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for t in _targets(target):
                    if isinstance(t, ast.Name):
                        if where == "class":
                            role = "attribute"
                        elif where == "module" and case_style(t.id) == UPPER:
                            role = "constant"
                        else:
                            role = "variable"
                        add(Ident(t.id, role, t.lineno))
                    elif isinstance(t.value, ast.Name) and t.value.id == "self" and where == "function":
                        add(Ident(t.attr, "attribute", t.lineno))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            for t in _targets(node.target):
                if isinstance(t, ast.Name):
                    add(Ident(t.id, "variable", t.lineno))
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                for t in _targets(item.optional_vars) if item.optional_vars else []:
                    if isinstance(t, ast.Name):
                        add(Ident(t.id, "variable", t.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out.imports.append(Import(alias.name, (), node.lineno, False))
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            names = tuple(a.name for a in node.names)
            out.imports.append(Import(module, names, node.lineno, node.level > 0))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.stmt, ast.comprehension)):
                visit(child, where)
            elif isinstance(child, ast.expr):
                for sub in ast.walk(child):
                    if isinstance(sub, ast.comprehension):
                        visit(sub, where)
            elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                body(child.body, where)

    body(tree.body, "module")


# --- JavaScript / TypeScript -------------------------------------------------------------------

_REGEX_AFTER = frozenset("(,=:[!&|?{};+-*%<>~^")
_REGEX_WORDS = frozenset({"return", "typeof", "case", "in", "of", "void", "delete", "throw", "new", "else", "yield"})


def blank_js(text: str) -> str:
    """``text`` with comments and the contents of strings, templates and regular expressions
    replaced by spaces (quotes kept, line breaks kept), so regular expressions see only code."""
    out = list(text)
    n = len(text)
    i = 0
    prev, word = "", ""

    def clear(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c in " \t\r\n":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            clear(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            clear(i, j)
            i = j
        elif c in "'\"":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            clear(i + 1, j)
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
            clear(i + 1, j)
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
            clear(i + 1, j)
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
    return "".join(out)


_ID = r"[A-Za-z_$][\w$]*"
_KEYWORDS = frozenset(
    {
        *("if", "for", "while", "switch", "catch", "function", "return", "else", "do", "try", "finally", "new"),
        *("typeof", "delete", "void", "in", "of", "with", "await", "yield", "constructor", "super", "this"),
        *("import", "export", "default", "class", "extends", "const", "let", "var", "case", "break", "continue"),
        *("throw", "static", "get", "set", "async", "public", "private", "protected", "readonly", "declare"),
        *("abstract", "override", "type", "interface", "enum", "namespace", "module", "as", "from", "true"),
        *("false", "null", "undefined"),
    }
)
_FUNCTION = re.compile(rf"^(\s*)(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*({_ID})\s*(?:<[^>]*>)?\s*\(")
_CLASS = re.compile(rf"^(\s*)(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+({_ID})")
_DECL = re.compile(rf"\b(const|let|var)\s+({_ID})\s*[:=]")
_DESTRUCT = re.compile(r"\b(?:const|let|var)\s+\{([^}=]*)\}\s*=")
_ARROW = re.compile(rf"^(\s*)(?:export\s+)?(?:const|let|var)\s+({_ID})\s*(?::[^=]+)?=\s*(?:async\s+)?(?:\(|{_ID}\s*=>)")
_METHOD = re.compile(
    rf"^(\s+)(?:(?:public|private|protected|static|async|readonly|override|abstract|get|set)\s+)*\*?\s*"
    rf"(#?{_ID})\s*(?:<[^>]*>)?\s*\(([^()]*)\)\s*(?::\s*[^{{;]+)?\{{\s*$"
)
_PARAMS = re.compile(
    rf"(?:function\s*\*?\s*(?:{_ID})?\s*(?:<[^>]*>)?|(?<![\w$.]){_ID}\s*=\s*(?:async\s+)?)\(([^()]*)\)"
)
_ARROW_PARAMS = re.compile(r"\(([^()]*)\)\s*(?::\s*[^=;{]+)?=>")
_IMPORT_FROM = re.compile(r"\b(?:import|export)\s+(?:type\s+)?([^;'\"]*?)\s*from\s*['\"]")
_IMPORT_BARE = re.compile(r"\bimport\s*['\"]")
_REQUIRE = re.compile(r"\brequire\s*\(\s*['\"]")


def _js_params(raw: str, line: int, add: object) -> None:
    depth = 0
    part = ""
    parts = []
    for ch in raw:
        if ch in "{[<(":
            depth += 1
        elif ch in "}]>)":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += ch
    parts.append(part)
    for p in parts:
        p = p.strip().lstrip(".").strip()
        m = re.match(rf"(?:(?:public|private|protected|readonly)\s+)*({_ID})\s*\??\s*(?:[:=]|$)", p)
        if m and m.group(1) not in _KEYWORDS:
            add(Ident(m.group(1), "parameter", line))  # type: ignore[operator]


def _js(out: Facts, text: str, is_test: bool) -> None:
    code = blank_js(text)
    raw_lines = text.split("\n")
    lines = code.split("\n")
    add = out.identifiers.append
    depth = 0
    class_depths: list[int] = []  # brace depth at which each open class body sits
    for no, line in enumerate(lines, 1):
        stripped = line.strip()
        at_top = depth == 0
        in_class = bool(class_depths) and depth == class_depths[-1]
        m = _FUNCTION.match(line)
        if m and m.group(2) not in _KEYWORDS:
            role = "test_function" if is_test and m.group(2).startswith("test") else "function"
            add(Ident(m.group(2), role, no))
            if at_top:
                out.definitions.append(Definition("function", m.group(2), no))
        m = _CLASS.match(line)
        if m:
            add(Ident(m.group(2), "class", no))
            if at_top:
                out.definitions.append(Definition("class", m.group(2), no))
        m = _ARROW.match(line)
        if m and m.group(2) not in _KEYWORDS:
            add(Ident(m.group(2), "function", no))
        else:
            for m in _DECL.finditer(line):
                name = m.group(2)
                if name in _KEYWORDS:
                    continue
                role = "constant" if at_top and m.group(1) == "const" and case_style(name) == UPPER else "variable"
                add(Ident(name, role, no))
        for m in _DESTRUCT.finditer(line):
            for piece in m.group(1).split(","):
                name = piece.split(":")[-1].strip().lstrip(".")
                if re.fullmatch(_ID, name) and name not in _KEYWORDS:
                    add(Ident(name, "variable", no))
        if in_class:
            m = _METHOD.match(line)
            if m and m.group(2).lstrip("#") not in _KEYWORDS:
                add(Ident(m.group(2).lstrip("#"), "method", no))
                _js_params(m.group(3), no, add)
        for m in _PARAMS.finditer(line):
            _js_params(m.group(1), no, add)
        for m in _ARROW_PARAMS.finditer(line):
            _js_params(m.group(1), no, add)
        for pattern in (_IMPORT_FROM, _IMPORT_BARE, _REQUIRE):
            for m in pattern.finditer(line):
                quote_at = m.end() - 1
                raw = raw_lines[no - 1]
                close = raw.find(raw[quote_at], quote_at + 1) if quote_at < len(raw) else -1
                if close < 0:
                    continue
                module = raw[quote_at + 1 : close]
                names = tuple(
                    n.strip().split(" as ")[-1].strip()
                    for n in re.sub(r"[{}*]", ",", m.group(1) if pattern is _IMPORT_FROM else "").split(",")
                    if n.strip()
                )
                out.imports.append(Import(module, names, no, module.startswith(".")))
        if _CLASS.match(line) and "{" in line:
            opened = depth + line.count("{") - line.count("}")
            class_depths.append(opened)
        depth += line.count("{") - line.count("}")
        while class_depths and depth < class_depths[-1]:
            class_depths.pop()
        if depth < 0:
            depth = 0
        del stripped


# --- resolution -------------------------------------------------------------------------------

_JS_EXTS = (".ts", ".tsx", ".js", ".mjs", ".cjs", ".jsx")


def _py_roots(paths: set[str]) -> list[str]:
    roots = [""]
    if any(p.startswith("src/") for p in paths):
        roots.append("src/")
    return roots


def resolve(files: dict[str, Facts]) -> None:
    """Set ``Import.resolved`` to the repository file each import names, when it names one."""
    paths = set(files)
    roots = _py_roots(paths)
    for f in files.values():
        for imp in f.imports:
            imp.resolved = (
                _resolve_py(f.path, imp, paths, roots) if f.language == "python" else _resolve_js(f.path, imp, paths)
            )


def _py_file(dotted: str, paths: set[str], roots: list[str]) -> str:
    if not dotted:
        return ""
    base = dotted.replace(".", "/")
    for r in roots:
        for cand in (f"{r}{base}.py", f"{r}{base}/__init__.py"):
            if cand in paths:
                return cand
    return ""


def _resolve_py(path: str, imp: Import, paths: set[str], roots: list[str]) -> str:
    if imp.relative:
        level = len(imp.module) - len(imp.module.lstrip("."))
        package = posixpath.dirname(path).split("/") if posixpath.dirname(path) else []
        package = package[: len(package) - (level - 1)] if level > 1 else package
        rest = imp.module.lstrip(".")
        base = "/".join([*package, *(rest.split(".") if rest else [])])
        for name in imp.names:
            for cand in (f"{base}/{name}.py", f"{base}/{name}/__init__.py"):
                if cand in paths:
                    return cand
        for cand in (f"{base}.py", f"{base}/__init__.py"):
            if cand.lstrip("/") in paths:
                return cand.lstrip("/")
        return ""
    for name in imp.names:
        hit = _py_file(f"{imp.module}.{name}", paths, roots)
        if hit:
            return hit
    return _py_file(imp.module, paths, roots)


def _resolve_js(path: str, imp: Import, paths: set[str]) -> str:
    if not imp.relative:
        return ""
    base = posixpath.normpath(posixpath.join(posixpath.dirname(path), imp.module))
    stem = base
    for ext in _JS_EXTS:
        if base.endswith(ext):
            stem = base[: -len(ext)]
    for cand in (base, *(stem + e for e in _JS_EXTS), *(f"{base}/index{e}" for e in _JS_EXTS)):
        if cand in paths:
            return cand
    return ""
