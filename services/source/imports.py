"""Resolve the imports of a repository's files to files of the same repository.

One pass builds dict indexes over all paths, a second looks every import up: no per-import
scans, so 10k files resolve in well under a second.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable, Iterable

import msgspec

from services.source.facts import FileFacts, Import
from services.source.paths import is_test_path, module_name, split_ext

_JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".vue", ".svelte")
_JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})


def _suffixes(parts: list[str], minimum: int) -> Iterable[str]:
    for start in range(len(parts) - minimum + 1):
        yield ".".join(parts[start:])


class _Index:
    """Lookups over every path of the repository (skipped files are import targets too)."""

    def __init__(self, files: list[FileFacts]) -> None:
        self.paths: set[str] = {f.path for f in files}
        self.facts: dict[str, FileFacts] = {f.path: f for f in files}
        self.py_modules: dict[str, str] = {}
        self.py_rooted: dict[str, list[str]] = {}
        self.dotted: dict[str, str | None] = {}  # Java/Kotlin/PHP qualified-name suffix -> file
        self.packages: dict[str, str | None] = {}  # dotted directory suffix -> a file in it
        self.go_dirs: dict[str, list[str]] = {}
        self.go_modules: list[tuple[str, str]] = []
        self.by_tail: dict[str, str | None] = {}  # path suffixes for C includes and Ruby requires
        for path in sorted(self.paths):
            stem, ext = split_ext(path)
            if ext in (".py", ".pyi"):
                self._python(path, ext)
            elif ext in (".java", ".kt", ".kts", ".php"):
                parts = stem.lower().split("/") if ext == ".php" else stem.split("/")
                for key in _suffixes(parts, 2):
                    self.dotted[key] = None if key in self.dotted else path
                for key in _suffixes(parts[:-1], 1):
                    self.packages.setdefault(key, path)
            elif ext == ".go" and not path.endswith("_test.go"):
                self.go_dirs.setdefault(posixpath.dirname(path), []).append(path)
            elif ext in (".h", ".hpp", ".hh", ".hxx", ".c", ".cc", ".cpp", ".rb", ".inc"):
                parts = path.split("/")
                for start in range(1, len(parts)):
                    tail = "/".join(parts[start:])
                    self.by_tail[tail] = None if tail in self.by_tail else path
            if path.endswith("go.mod"):
                facts = self.facts[path]
                if facts.module:
                    self.go_modules.append((facts.module, posixpath.dirname(path)))
        self.go_prefixes = _go_prefixes(self, files)

    def _python(self, path: str, ext: str) -> None:
        module = module_name(path, "python")
        if ext == ".py" or module not in self.py_modules:
            self.py_modules[module] = path
        # The module name below the topmost directory that is still a package (has __init__).
        parts = path[: -len(ext)].split("/")
        root = len(parts) - 1
        while root > 0 and "/".join(parts[:root]) + "/__init__.py" in self.paths:
            root -= 1
        rooted = parts[root:]
        if rooted[-1] == "__init__" and len(rooted) > 1:
            rooted = rooted[:-1]
        self.py_rooted.setdefault(".".join(rooted), []).append(path)

    def representative(self, directory: str, files: list[str]) -> str:
        """The file an import of a whole package resolves to: dir/<dir>.go, doc.go, or the first."""
        base = posixpath.basename(directory)
        for name in (f"{base}.go", "doc.go"):
            candidate = posixpath.join(directory, name)
            if candidate in files:
                return candidate
        return files[0]


def resolve_imports(files: list[FileFacts]) -> list[FileFacts]:
    """Fill ``Import.resolved_path`` (and group="local") for imports of files of the repository.

    Python dotted and relative imports (packages resolve to their ``__init__.py``), JS/TS relative
    paths with extension and index resolution, Go by module path (go.mod or inferred), Java/Kotlin
    and PHP by qualified name, C/C++ includes, Ruby requires and Rust ``crate::``/``mod`` paths.
    A Go package resolves to one file of its directory. Test files also gain the ``module`` of
    every local file they import in ``tests_for``.
    """
    resolver = Resolver(files)
    return [resolver.resolve(facts) for facts in files]


class Resolver:
    """The lookups over one tree, kept so that files of it can be resolved again one by one.

    A file's resolution depends on its own facts, the tree's paths and, beyond paths, only on
    Go module paths (``go.mod`` contents, or the imports of Go files when there is none) and
    the language, test-ness and module of the files it imports (``tests_for``). ``reusable_for``
    says when a change leaves all of that as it was, so only the changed files need resolving.
    """

    def __init__(self, files: list[FileFacts]) -> None:
        self.index = _Index(files)

    def resolve(self, facts: FileFacts) -> FileFacts:
        resolver = _RESOLVERS.get(facts.language)
        if resolver is None or not facts.imports:
            return facts
        imports: list[Import] = []
        targets: list[str] = []
        for imp in facts.imports:
            target = resolver(self.index, facts, imp)
            if target and target != facts.path:
                imp = msgspec.structs.replace(imp, resolved_path=target, group="local")
                targets.append(target)
            imports.append(imp)
        if not targets:
            return facts
        tests_for = facts.tests_for
        if facts.is_test:
            tests_for = _tests_for(self.index, facts.tests_for, targets)
        return msgspec.structs.replace(facts, imports=tuple(imports), tests_for=tests_for)

    def reusable_for(self, changed: list[FileFacts]) -> bool:
        """Whether replacing these files' facts (same paths) leaves every other file's resolution
        as it was; ``update`` must then be called with them."""
        for new in changed:
            old = self.index.facts.get(new.path)
            if old is None:
                return False
            if "go" in (old.language, new.language) or new.path.endswith("go.mod"):
                return False
            if (old.language, old.is_test, old.module) != (new.language, new.is_test, new.module):
                return False
        return True

    def update(self, changed: list[FileFacts]) -> None:
        for new in changed:
            self.index.facts[new.path] = new


def _tests_for(index: _Index, current: tuple[str, ...], targets: list[str]) -> tuple[str, ...]:
    found = list(current)
    for target in targets:
        facts = index.facts.get(target)
        language = facts.language if facts is not None else ""
        if facts is None or facts.is_test or is_test_path(target, language):
            continue  # helpers and fixtures are not what a test exercises
        module = facts.module or module_name(target, language)
        if module and module not in found:
            found.append(module)
    return tuple(found)


# --- Python -----------------------------------------------------------------------------


def _python(index: _Index, facts: FileFacts, imp: Import) -> str:
    if imp.is_relative:
        return _python_relative(index, facts.path, imp)
    module = imp.module
    if module == "__future__":
        return ""
    first = next((name for name in imp.names if name and name != "*"), "")
    # A stdlib name resolves only to a module at a source root, which shadows the stdlib at run
    # time; a same-named module deeper down (scripts/json.py) is not what `import json` loads.
    exact_only = imp.group == "stdlib"
    for candidate in ([f"{module}.{first}"] if first else []) + [module]:
        path = index.py_modules.get(candidate)
        if not path and not exact_only:
            path = _closest(index.py_rooted.get(candidate), facts.path)
        if path:
            return path
    return ""


def _closest(paths: list[str] | None, importer: str) -> str:
    """Among same-named modules of several source roots, the one nearest the importer."""
    if not paths:
        return ""
    if len(paths) == 1:
        return paths[0]
    return max(paths, key=lambda p: (len(posixpath.commonpath([p, importer])), -len(p)))


def _python_relative(index: _Index, importer: str, imp: Import) -> str:
    dots = len(imp.module) - len(imp.module.lstrip("."))
    base = posixpath.dirname(importer)
    for _ in range(dots - 1):
        base = posixpath.dirname(base)
    rest = imp.module[dots:].replace(".", "/")
    target = posixpath.join(base, rest) if rest else base
    first = next((name for name in imp.names if name and name != "*"), "")
    candidates = [f"{target}/{first}"] if first else []
    candidates.append(target)
    for candidate in candidates:
        for path in (f"{candidate}.py", f"{candidate}/__init__.py", f"{candidate}.pyi"):
            if candidate and path in index.paths:
                return path
    return ""


# --- JavaScript / TypeScript ------------------------------------------------------------


def _js(index: _Index, facts: FileFacts, imp: Import) -> str:
    spec = imp.module.split("?", 1)[0]
    if spec.startswith("."):
        bases = [posixpath.normpath(posixpath.join(posixpath.dirname(facts.path), spec))]
    elif spec.startswith(("@/", "~/")):
        bases = [f"src/{spec[2:]}", spec[2:]]
    elif "/" in spec and not spec.startswith("@"):
        bases = [f"src/{spec}", spec]  # baseUrl-style imports ("components/Button")
    else:
        return ""
    for base in bases:
        found = _js_file(index.paths, base)
        if found:
            return found
    return ""


def _js_file(paths: set[str], base: str) -> str:
    if base in paths:
        return base
    stem, ext = split_ext(base)
    if ext in (".js", ".jsx", ".mjs", ".cjs"):  # TS sources imported by their compiled name
        for alt in (".ts", ".tsx", ".mts", ".cts"):
            if stem + alt in paths:
                return stem + alt
    for candidate in (base, f"{base}/index"):
        for extension in _JS_EXTENSIONS:
            if candidate + extension in paths:
                return candidate + extension
    return ""


# --- Go ---------------------------------------------------------------------------------


def _go_prefixes(index: _Index, files: list[FileFacts]) -> list[tuple[str, str]]:
    """(module path, directory) pairs: from go.mod files, else inferred from the imports.

    Without a go.mod, a module path is any prefix that, stripped from at least one import,
    leaves a directory of the repository at least two segments deep; a one-segment match
    alone ("github.com/lib/pq" against a "pq/" dir) is too weak to count.
    """
    if index.go_modules:
        return sorted(index.go_modules, key=lambda item: -len(item[0]))
    votes: Counter[str] = Counter()
    for facts in files:
        if facts.language != "go":
            continue
        for imp in facts.imports:
            parts = imp.module.split("/")
            for start in range(1, len(parts) - 1):
                if "/".join(parts[start:]) in index.go_dirs:
                    votes["/".join(parts[:start])] += 1
                    break
    return [(prefix, "") for prefix, _ in votes.most_common()]


def _go(index: _Index, facts: FileFacts, imp: Import) -> str:
    module = imp.module
    for prefix, directory in index.go_prefixes:
        if module == prefix:
            rest = ""
        elif module.startswith(prefix + "/"):
            rest = module[len(prefix) + 1 :]
        else:
            continue
        target = posixpath.join(directory, rest) if directory else rest
        files = index.go_dirs.get(target)
        if files:
            return index.representative(target, files)
    return ""


# --- Java, Kotlin, PHP ------------------------------------------------------------------


def _qualified(index: _Index, facts: FileFacts, imp: Import) -> str:
    if facts.language == "php":
        module = imp.module.replace("\\", ".").lower()
        if imp.is_relative:  # require 'helpers.php'
            path = posixpath.normpath(posixpath.join(posixpath.dirname(facts.path), imp.module))
            return path if path in index.paths else ""
    else:
        module = imp.module
    if imp.names == ("*",):
        return index.packages.get(module) or ""
    parts = module.split(".")
    # Nested classes and static members: drop trailing segments until a file matches.
    for end in range(len(parts), 1, -1):
        found = index.dotted.get(".".join(parts[:end]))
        if found:
            return found
    if facts.language == "kotlin":  # top-level functions live in files not named after them
        return index.packages.get(".".join(parts[:-1])) or ""
    return ""


# --- C/C++, Ruby, Rust ------------------------------------------------------------------


def _include(index: _Index, facts: FileFacts, imp: Import) -> str:
    if imp.is_relative:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(facts.path), imp.module))
        if path in index.paths:
            return path
    return index.by_tail.get(imp.module) or ""


def _ruby(index: _Index, facts: FileFacts, imp: Import) -> str:
    name = imp.module if imp.module.endswith(".rb") else imp.module + ".rb"
    if imp.is_relative:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(facts.path), name))
        return path if path in index.paths else ""
    for candidate in (f"lib/{name}", name, f"app/{name}"):
        if candidate in index.paths:
            return candidate
    return (index.by_tail.get(name) or "") if "/" in name else ""


def _rust(index: _Index, facts: FileFacts, imp: Import) -> str:
    parts = imp.module.split("::")
    path = facts.path
    directory = posixpath.dirname(path)
    stem = posixpath.basename(path)[:-3]
    # The directory holding this module's children: foo.rs owns foo/, mod.rs/lib.rs/main.rs their dir.
    own = directory if stem in ("mod", "lib", "main") else posixpath.join(directory, stem)
    head, rest = parts[0], parts[1:]
    if head == "crate":
        marker = path.rfind("/src/")
        base = path[: marker + 4] if marker >= 0 else ("src" if path.startswith("src/") else directory)
    elif head == "self":
        base = own
    elif head == "super":
        base = posixpath.dirname(own)
        while rest and rest[0] == "super":
            base, rest = posixpath.dirname(base), rest[1:]
    else:
        return ""
    for end in range(len(rest), 0, -1):  # the last segments may name items, not modules
        target = posixpath.join(base, *rest[:end])
        for candidate in (f"{target}.rs", f"{target}/mod.rs"):
            if candidate in index.paths:
                return candidate
    return ""


_RESOLVERS: dict[str, Callable[[_Index, FileFacts, Import], str]] = {
    "python": _python,
    "javascript": _js,
    "typescript": _js,
    "tsx": _js,
    "go": _go,
    "java": _qualified,
    "kotlin": _qualified,
    "php": _qualified,
    "c": _include,
    "cpp": _include,
    "ruby": _ruby,
    "rust": _rust,
}
