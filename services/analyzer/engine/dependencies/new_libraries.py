"""Dependencies family, new libraries: a third-party library no other file of the repository uses.

The job table (``libraries.py``) knows which libraries compete for a job; it cannot know every
library. What the repository itself tells is how often a file brings in a library that no other
file uses. Counted per language with a leave-one-out view: a file *introduces* a library when it is
the only file importing it. In a repository where no file or almost none does (every package of
CPython's standard library, a library proud of having no dependencies), the first ``import dill``
is a new dependency worth a question; where optional drivers each sit in their own file
(SQLAlchemy's dialects), the share is lower and the rule stays quiet.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Iterable

from services.analyzer.engine.conventions import LANGUAGE, Convention, Scope, make
from services.analyzer.engine.dependencies import declared_library, declares, local_tops, settled_otherwise, tops_of
from services.analyzer.engine.dependencies.libraries import JS_LANGUAGES, classify
from services.analyzer.engine.file_check import FileCheck
from services.analyzer.engine.findings import WARNING
from services.analyzer.engine.learn_inputs import LearnInput, is_program
from services.analyzer.engine.toolconfig import fixture, inline_script_requirements, library_key
from services.source.facts import FileFacts, Import

FAMILY = "dependencies"
RULE = "dependencies.library.new"
_MAX_LISTED = 12  # libraries named in a message
_LANGUAGES = frozenset({"python", *JS_LANGUAGES})
# Standard-library modules newer than the interpreter the service runs on (3.11), which
# ``sys.stdlib_module_names`` therefore files as third party: attrs' ``import annotationlib`` under
# a version test is Python 3.14's, no dependency of its own.
_NEWER_STDLIB = frozenset({"annotationlib", "compression"})


def library_of(language: str, imp: Import, local_tops: frozenset[str]) -> str:
    """The distribution-level name a third-party import belongs to, or "" for anything else (an
    import under ``if TYPE_CHECKING:`` is for the type checker, not a dependency)."""
    if imp.group != "third_party" or imp.is_relative or imp.resolved_path or imp.typing_only:
        return ""
    module = imp.module
    if language == "python":
        top = module.split(".", 1)[0]
        # A private top-level module (``_interpreters``, ``_pytest``, ``_cffi_backend``) is the
        # implementation of the standard library or of a distribution imported by its public name:
        # no library of its own, and counting it made anyio's test files look as if each brought
        # in a new dependency. So are the running program (``__main__``) and typeshed's
        # ``_typeshed`` (types for the checker, nothing at run time).
        if not top or top.startswith("_") or top in local_tops or top in _NEWER_STDLIB:
            return ""
        return top
    if module.startswith(("node:", ".", "/", "#")) or ":" in module:
        return ""
    parts = module.split("/")
    top = "/".join(parts[:2]) if module.startswith("@") and len(parts) > 1 else parts[0]
    return "" if top in local_tops else top


# Developer automation at the repository's root (nox sessions, invoke and fabric tasks, doit) runs
# the project's tools, which it imports (packaging's ``noxfile.py`` and ``tasks/licenses.py`` with
# ``httpx``), as a script does.
_AUTOMATION_FILES = frozenset({"noxfile.py", "tasks.py", "fabfile.py", "dodo.py"})
# Build scripts import the build system (mistune's ``setup.py`` and ``setuptools``, a hatch build
# hook and ``hatchling``): requirements of building the package, which pyproject.toml's
# [build-system] declares, not dependencies the library brings to its users.
_BUILD_SCRIPTS = frozenset({"setup.py", "hatch_build.py"})


def judged(f: FileFacts, fixtures: frozenset[str] = frozenset()) -> bool:
    """Whether a file is asked about new libraries: not an example, doc page, script, benchmark,
    build script or root-level automation, which shows, builds or runs the library beside others
    rather than depending on them, and not the code of a package the tests build (``fixtures``)."""
    path = f.path
    return (
        f.language in _LANGUAGES
        and not is_program(path)
        and path not in _AUTOMATION_FILES
        and posixpath.basename(path) not in _BUILD_SCRIPTS
        and not path.startswith("tasks/")
        and not any(path.startswith(d + "/") for d in fixtures)
    )


def fixture_packages(paths: Iterable[str]) -> frozenset[str]:
    """Directories under a test directory that hold a ``setup.py`` of their own: packages the tests
    build (pip-tools' ``tests/test_data/packages/small_fake_with_build_deps/``), whose code imports
    what the fake package depends on (``fake_static_build_dep``), not what the project does."""
    return frozenset(posixpath.dirname(p) for p in paths if posixpath.basename(p) == "setup.py" and fixture(p))


def file_libraries(f: FileFacts, tops: frozenset[str], *, optional: bool = True) -> dict[str, int]:
    """library -> first line importing it, for one file; ``optional=False`` leaves out libraries the
    file only imports under an ``except ImportError`` guard (``try: import sniffio``), which it runs
    without: a library the repository knows, but no dependency the file brings in."""
    out: dict[str, int] = {}
    if f.language not in _LANGUAGES:
        return out
    for imp in f.imports:
        lib = library_of(f.language, imp, tops)
        if lib and (optional or not imp.optional):
            out.setdefault(lib, imp.line)
    return out


def own_modules(paths: Iterable[str]) -> frozenset[str]:
    """Names a Python file of the repository can be imported by once its directory is on
    ``sys.path`` (``tasks/capabilities.py``, ``.github/action_helper.py``, a ``pkg/__init__.py``):
    a test or script that puts the directory there imports the repository's own code, no library."""
    out: set[str] = set()
    for path in paths:
        directory, name = posixpath.split(path)
        if name == "__init__.py" and directory:
            out.add(posixpath.basename(directory))
        elif name.endswith(".py"):
            out.add(name[: -len(".py")])
    return frozenset(out)


def learn(inp: LearnInput, modules: dict[str, str], declared: frozenset[str] = frozenset()) -> list[Convention]:
    """``declared``: the libraries the project lists as dependencies (``toolconfig.library_key``
    form). A file importing one brings in nothing new even when it is the only importer: anyio's
    test files each import a test dependency its ``pyproject.toml`` lists (``trustme``, ``uvloop``),
    which kept its habit at 73 of 79 files, loose, and an undeclared ``plumbum`` unflagged."""
    tops = local_tops(modules) | own_modules(f.path for f in inp.files if f.language == "python")
    fixtures = fixture_packages(f.path for f in inp.files)
    per_file: dict[str, list[set[str]]] = {}
    users: dict[str, Counter[str]] = {}
    for f in inp.files:
        if f.language not in _LANGUAGES:
            continue
        users.setdefault(f.language, Counter()).update(set(file_libraries(f, tops)))
        # The habit is learned on the files the rule judges: a docs/conf.py importing sphinx, or
        # a benchmark its pyperf, tells nothing of how library and test files bring in libraries
        # (and kept anyio's, pip-tools' and jsonschema's habit under the bar); what they import is
        # still known to the other files.
        if judged(f, fixtures):
            per_file.setdefault(f.language, []).append(set(file_libraries(f, tops, optional=False)))
    out: list[Convention] = []
    for language, files in per_file.items():
        counts = users[language]
        introducing = sum(
            1 for libs in files if any(counts[lib] == 1 and not declares(declared, language, lib) for lib in libs)
        )
        known = sorted(counts, key=lambda lib: (-counts[lib], lib))
        conv = make(
            FAMILY,
            RULE,
            Scope(LANGUAGE, language),
            "known libraries",
            len(files) - introducing,
            len(files),
            inp.thresholds,
            language=language,
            subject="files",
            predicate="import only libraries that other files of the repository import too",
            examples=[f"{lib} ({counts[lib]} files)" for lib in known[:5]],
            params={"libraries": ",".join(known), "library_count": len(known)},
        )
        out.append(conv)
    return out


def _known(conv: Convention, fc: FileCheck) -> frozenset[str]:
    cache: dict[str, frozenset[str]] = fc.index.extra.setdefault(RULE, {})
    known = cache.get(conv.id)
    if known is None:
        known = cache[conv.id] = frozenset(filter(None, str(conv.params.get("libraries", "")).split(",")))
    return known


def _job_rule_covers(fc: FileCheck, library: str) -> bool:
    """A library the job table places, where the repository has chosen for that job: the
    job rule's finding ("imports `requests` ... uses `httpx`") says more than this one would."""
    return any(settled_otherwise(fc, job, label) for job, label in classify(fc.language, library))


def _sibling(fc: FileCheck, name: str) -> bool:
    """Whether a Python import names a module next to the importing file: a script or a test
    module run from its own directory (``import _init`` beside ``_init.py``) imports its neighbour,
    which sys.path[0] (pytest's rootdir-less ``prepend`` mode likewise) puts first."""
    if fc.language != "python":
        return False
    paths: frozenset[str] | None = fc.index.extra.get("module_paths")
    if paths is None:
        paths = fc.index.extra["module_paths"] = frozenset(fc.index.model.modules.values())
    directory = posixpath.dirname(fc.path)
    return any(posixpath.join(directory, tail) in paths for tail in (f"{name}.py", f"{name}/__init__.py"))


def check(fc: FileCheck) -> None:
    fixtures: frozenset[str] | None = fc.index.extra.get("fixture_packages")
    if fixtures is None:
        fixtures = fc.index.extra["fixture_packages"] = fixture_packages(fc.index.model.modules.values())
    if not judged(fc.facts, fixtures):
        return
    conv = fc.find(RULE)
    if conv is None or not fc.wants(conv):
        return
    tops: frozenset[str] | None = fc.index.extra.get("own_modules")
    if tops is None:
        tops = fc.index.extra["own_modules"] = tops_of(fc) | own_modules(fc.index.model.modules.values())
    known = _known(conv, fc)
    # A PEP 723 script runs with the dependencies its `# /// script` block lists (nox's
    # tests/resources/pep721example1.py with `rich`), which the project need not provide; what it
    # imports beyond them (a planted `import sh`) it brings in like any other file.
    own = inline_script_requirements(fc.text) if fc.language == "python" else set()
    for library, line in file_libraries(fc.facts, tops, optional=False).items():
        if library in known or _job_rule_covers(fc, library) or _sibling(fc, library):
            continue
        if library_key(library) in own:
            continue
        modules = [
            m
            for imp in fc.facts.imports
            if library_of(fc.language, imp, tops) == library
            for m in (imp.module, *(f"{imp.module}.{n}" for n in imp.names if n and n != "*"))
        ]
        if declared_library(fc, library, modules):
            continue  # loguru's tests import pytest_mypy_plugins, which its dev extra lists
        listed = sorted(known)[:_MAX_LISTED]
        uses = (
            "the repository's libraries: "
            + ", ".join(f"`{lib}`" for lib in listed)
            + (f" and {len(known) - len(listed)} more" if len(known) > len(listed) else "")
            if known
            else "the repository imports no third-party library"
        )
        fc.emit(
            conv,
            line,
            f"imports `{library}`, which no other file of the repository imports: a new dependency "
            f"({uses}; {conv.description})",
            severity=WARNING,
            key=library,
            detail={"library": library, "known_libraries": len(known)},
        )
