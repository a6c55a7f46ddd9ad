"""A third-party library no other file uses, judged by how often the repository's files do that."""

from __future__ import annotations

from services.analyzer.engine import CheckPrefs, check, learn
from services.analyzer.engine.dependencies.new_libraries import RULE, library_of, local_tops
from services.source.extract import extract
from services.source.facts import FileFacts, Import
from tests.analyzer.engine_factories import HELD_RAISED, imp, py_file

LOOSE = CheckPrefs(level="loose")


def _repo(files: int = 40, *, singletons: int = 0) -> list[FileFacts]:
    """``files`` modules importing httpx and the stdlib; ``singletons`` of them also bring in a
    library of their own (an optional driver each)."""
    out = []
    for i in range(files):
        imports = [imp("json", 1), imp("httpx", 2, group="third_party")]
        if i < singletons:
            imports.append(imp(f"driver{i}", 3, group="third_party"))
        out.append(py_file(f"pkg/m{i}.py", imports=imports))
    return out


def _found(model: object, imports: list[Import], prefs: CheckPrefs | None = None) -> list[tuple[int, str]]:
    facts = py_file("pkg/new.py", imports=imports)
    found = check(facts, "import x\n" * 5, model, prefs=prefs) if prefs else check(facts, "import x\n" * 5, model)  # type: ignore[arg-type]
    return [(f.start_line, f.message) for f in found if f.rule == RULE]


def test_a_library_no_other_file_uses_is_a_new_dependency() -> None:
    model = learn(_repo(), thresholds=HELD_RAISED)

    found = _found(model, [imp("httpx", 1, group="third_party"), imp("dill", 2, group="third_party")])

    assert len(found) == 1
    line, message = found[0]
    assert line == 2
    assert "`dill`" in message
    assert "`httpx`" in message
    assert "40 of 40 python files (100%)" in message


def test_a_stdlib_only_repository_says_so() -> None:
    files = [py_file(f"lib/m{i}.py", imports=[imp("os", 1)]) for i in range(35)]

    found = _found(learn(files, thresholds=HELD_RAISED), [imp("plumbum", 1, group="third_party")])

    assert len(found) == 1
    assert "the repository imports no third-party library" in found[0][1]


def test_where_files_often_bring_their_own_library_the_rule_is_quiet() -> None:
    model = learn(_repo(40, singletons=6), thresholds=HELD_RAISED)  # 34 of 40: 85%

    assert _found(model, [imp("dill", 2, group="third_party")], LOOSE) == []


def test_known_libraries_local_packages_and_the_stdlib_are_not_new() -> None:
    files = [*_repo(), py_file("tools/helper.py")]
    model = learn(files, thresholds=HELD_RAISED)

    found = _found(
        model,
        [
            imp("httpx", 1, group="third_party"),
            imp("os.path", 2),
            imp("tools.helper", 3, group="third_party"),  # a package of the repository
            imp(".sibling", 4, group="local"),
        ],
        LOOSE,
    )

    assert found == []


def test_a_library_the_job_table_places_gets_the_job_rule_finding_only() -> None:
    model = learn(_repo(), thresholds=HELD_RAISED)
    facts = py_file("pkg/new.py", imports=[imp("requests", 2, group="third_party")])

    rules = [f.rule for f in check(facts, "import x\n" * 5, model)]

    assert rules == ["dependencies.library.http_client"]


def test_javascript_package_names() -> None:
    tops = frozenset()
    for module, lib in [
        ("lodash/fp", "lodash"),
        ("@scope/pkg/sub", "@scope/pkg"),
        ("node:fs", ""),
        ("./local", ""),
    ]:
        relative = module.startswith(".")
        group = "local" if relative else "third_party"
        assert library_of("javascript", Import(module, ("",), 1, "", relative, group), tops) == lib


def test_a_javascript_import_of_a_directory_of_the_repository_is_not_a_library() -> None:
    tops = local_tops({"src/components/Button": "src/components/Button.tsx", "pkg.mod": "pkg/mod.py"})

    assert tops == {"src", "components", "pkg"}
    alias = Import("components/Card", ("",), 1, "", False, "third_party")
    assert library_of("typescript", alias, tops) == ""


def test_a_script_importing_its_neighbour_module_imports_no_library() -> None:
    # Test fixtures run as scripts from their directory: `import _init` loads the `_init.py` beside them.
    files = _repo()
    files.append(py_file("tests/source/ownership/_init.py", imports=[imp("sys", 1)]))
    files.append(py_file("tests/source/ownership/helpers.py", imports=[imp("sys", 1)]))
    model = learn(files, thresholds=HELD_RAISED)
    imports = [
        imp("sys", 1),
        imp("_init", 2, group="third_party"),
        imp("helpers", 3, group="third_party"),
        imp("somelib", 4, group="third_party"),
    ]

    found = check(py_file("tests/source/ownership/direct.py", imports=imports), "import x\n" * 5, model)
    elsewhere = check(py_file("pkg/direct.py", imports=imports), "import x\n" * 5, model)

    assert [f.start_line for f in found if f.rule == RULE] == [4]  # somelib, not _init or helpers
    # Away from them too: `helpers` is a module of the repository, a private `_init` no library.
    assert [f.start_line for f in elsewhere if f.rule == RULE] == [4]


def test_private_modules_and_newer_stdlib_modules_bring_in_no_library() -> None:
    """attrs' test suite: pytest and hypothesis everywhere, one module reaching for Python 3.14's
    ``annotationlib`` under a version test, a conftest importing ``_pytest`` internals, a test of
    subinterpreters importing CPython's private ``_interpreters``. None of those is a dependency a
    file brought in, so the habit stays sure and a test importing ``dill`` is a new dependency."""
    files = [
        py_file(
            f"tests/test_m{i}.py",
            imports=[imp("pytest", 1, group="third_party"), imp("hypothesis", 2, group="third_party")],
        )
        for i in range(30)
    ]
    files += [
        py_file("src/attr/_compat.py", imports=[imp("annotationlib", 3, group="third_party")]),
        py_file("tests/conftest.py", imports=[imp("_pytest.fixtures", 1, group="third_party")]),
        py_file("tests/test_sub.py", imports=[imp("_interpreters", 1, group="third_party")]),
    ]
    model = learn(files, thresholds=HELD_RAISED)
    conv = next(c for c in model.conventions if c.rule == RULE)

    assert (conv.count, conv.support, conv.level) == (33, 33, "strict")
    assert library_of("python", imp("annotationlib", 1, group="third_party"), frozenset()) == ""
    assert library_of("python", imp("_pytest.fixtures", 1, group="third_party"), frozenset()) == ""
    found = _found(model, [imp("pytest", 1, group="third_party"), imp("dill", 2, group="third_party")])
    assert [line for line, _ in found] == [2]


def test_a_library_the_project_declares_as_a_dependency_is_neither_new_nor_a_competitor() -> None:
    # loguru's dev extra lists pytest-mypy-plugins, which tests/conftest.py imports as
    # pytest_mypy_plugins; anyio's trio extra lists the trio its tests run against beside asyncio.
    pyproject = (
        '[project]\nname = "pkg"\ndependencies = ["httpx>=0.27"]\n\n'
        '[project.optional-dependencies]\ndev = ["pytest-mypy-plugins==3.1.0"]\ntrio = ["trio >= 0.26"]\n'
    )
    files = _repo() + [py_file(f"pkg/loop{i}.py", imports=[imp("asyncio", 1)]) for i in range(12)]
    new = [imp("pytest_mypy_plugins", 1, group="third_party"), imp("trio", 2, group="third_party")]
    undeclared = learn(files, thresholds=HELD_RAISED)
    found = check(py_file("pkg/new.py", imports=new), "import x\n" * 5, undeclared)
    assert [(f.rule, f.start_line) for f in found] == [(RULE, 1), ("dependencies.library.async", 2)]

    declared = learn(files, tool_configs={"pyproject.toml": pyproject}, thresholds=HELD_RAISED)
    assert declared.declared_libraries == ("httpx", "pytest_mypy_plugins", "trio")
    assert check(py_file("pkg/new.py", imports=new), "import x\n" * 5, declared) == []


def test_a_test_file_importing_a_declared_test_dependency_brings_in_nothing_new() -> None:
    """filelock and nox: most test files import pytest only, a few each import a test dependency
    no other file imports (``virtualenv``, ``coverage``), which ``pyproject.toml`` lists. Those
    files bring in nothing the project does not know, so the habit is sure and an undeclared
    ``plumbum`` that no file imports is a new dependency."""
    pyproject = (
        '[project]\nname = "filelock"\ndependencies = []\n\n'
        '[project.optional-dependencies]\ntesting = ["covdefaults>=2.3", "coverage>=7.6", "pytest>=8",'
        ' "virtualenv>=20.26", "docutils"]\n'
    )
    files = [py_file(f"tests/test_m{i}.py", imports=[imp("pytest", 1, group="third_party")]) for i in range(30)]
    for i, lib in enumerate(("virtualenv", "coverage", "docutils")):
        files.append(py_file(f"tests/test_x{i}.py", imports=[imp(lib, 1, group="third_party")]))
    undeclared = learn(files, thresholds=HELD_RAISED)
    model = learn(files, tool_configs={"pyproject.toml": pyproject}, thresholds=HELD_RAISED)

    assert next(c for c in undeclared.conventions if c.rule == RULE).level != "strict"
    conv = next(c for c in model.conventions if c.rule == RULE)
    assert (conv.count, conv.support, conv.level) == (33, 33, "strict")
    found = _found(model, [imp("coverage", 1, group="third_party"), imp("plumbum", 2, group="third_party")])
    assert [line for line, _ in found] == [2]


def test_a_module_of_the_repository_reached_through_sys_path_is_no_library() -> None:
    """filelock's tests put ``tasks/`` on ``sys.path`` and import ``capabilities``; nox's test of
    ``.github/action_helper.py`` imports ``action_helper``: the repository's own code."""
    files = [*_repo(), py_file("tasks/capabilities.py", imports=[imp("os", 1)])]
    files.append(py_file(".github/action_helper.py", imports=[imp("os", 1)]))
    model = learn(files, thresholds=HELD_RAISED)
    imports = [
        imp("capabilities", 1, group="third_party"),
        imp("action_helper", 2, group="third_party"),
        imp("plumbum", 3, group="third_party"),
    ]
    found = check(py_file("tests/test_strict_soft_compat.py", imports=imports), "import x\n" * 5, model)
    assert [f.start_line for f in found if f.rule == RULE] == [3]


def test_a_fixture_manifest_under_tests_declares_nothing_for_the_project() -> None:
    """pip-tools: tests/test_data/packages/fake_with_deps/pyproject.toml lists simplejson for a
    fake package its tests resolve; the project itself settles on json."""
    fixture = '[project]\nname = "fake_with_deps"\ndependencies = ["simplejson", "requests"]\n'
    project = '[project]\nname = "pip-tools"\ndependencies = ["click >= 8"]\n'
    files = [py_file(f"piptools/m{i}.py", imports=[imp("json", 1)]) for i in range(30)]
    model = learn(
        files,
        tool_configs={"pyproject.toml": project, "tests/test_data/packages/fake_with_deps/pyproject.toml": fixture},
        thresholds=HELD_RAISED,
    )
    assert model.declared_libraries == ("click",)
    found = check(py_file("piptools/new.py", imports=[imp("simplejson", 1, group="third_party")]), "x\n", model)
    assert [f.rule for f in found] == ["dependencies.library.json"]


def test_a_script_with_inline_metadata_declares_its_own_dependencies() -> None:
    """nox's tests/resources/pep721example1.py: PEP 723 metadata lists `rich`, which the script
    runs with; the project need not provide it."""
    model = learn(_repo(), thresholds=HELD_RAISED)
    text = '# /// script\n# dependencies = ["rich"]\n# ///\n\nimport rich\n\nrich.print("[blue]This worked!")\n'
    facts = py_file("tests/resources/pep721example1.py", imports=[imp("rich", 5, group="third_party")])
    assert [f.rule for f in check(facts, text, model) if f.rule == RULE] == []
    plain = text.replace("# /// script", "# script")
    assert [f.start_line for f in check(facts, plain, model) if f.rule == RULE] == [5]


def test_a_package_importing_itself_by_name_brings_in_nothing() -> None:
    """execa's test fixtures `import {sendMessage} from 'execa'`: Node's self-reference resolves
    the package's own name (package.json "name") to the package."""
    from services.analyzer.engine.toolconfig import read
    from services.source.extract import extract
    from services.source.imports import resolve_imports

    manifest = '{"name": "execa", "dependencies": {"get-stream": "^9.0.0"}, "devDependencies": {"ava": "^6.0.0"}}\n'
    assert read({"package.json": manifest}).libraries == {"execa", "get_stream", "ava"}
    lib = "import getStream from 'get-stream';\n\nexport const read = stream => getStream(stream);\n"
    files = [extract(f"lib/part{i}.js", lib.encode()) for i in range(40)]
    model = learn(resolve_imports(files), tool_configs={"package.json": manifest}, thresholds=HELD_RAISED)
    fixture = "import {sendMessage} from 'execa';\nimport isInCi from 'is-in-ci';\n\nawait sendMessage(isInCi);\n"
    found = check(extract("test/fixtures/graceful-send.js", fixture.encode()), fixture, model)
    assert [(f.start_line, f.rule) for f in found if f.rule == RULE] == [(2, RULE)]


def test_an_import_an_except_import_error_guards_brings_in_no_dependency() -> None:
    """anyio's ``_core/_eventloop.py`` tries ``import sniffio`` and sets ``sniffio = None`` when it
    is missing: the module runs without it, so the file brings in nothing the project must
    provide. Counting it kept anyio's habit at 73 of 75 files (loose), and a plain ``import
    plumbum`` in a test went unflagged; the same guarded import under review is no finding."""
    eventloop = (
        "from __future__ import annotations\n\n"
        "import threading\nfrom typing import Any\n\n"
        "sniffio: Any\ntry:\n    import sniffio\nexcept ModuleNotFoundError:\n    sniffio = None\n\n\n"
        "def current_async_library() -> str | None:\n"
        "    if sniffio is None:\n        return None\n"
        "    return sniffio.current_async_library()\n"
    )
    files = [extract(f"src/anyio/m{i}.py", b"import threading\n\nimport idna\n") for i in range(33)]
    files.append(extract("src/anyio/_core/_eventloop.py", eventloop.encode()))
    guarded = next(i for i in files[-1].imports if i.module == "sniffio")
    assert guarded.optional

    conv = next(c for c in learn(files, thresholds=HELD_RAISED).conventions if c.rule == RULE)
    assert (conv.count, conv.support, conv.level) == (34, 34, "strict")

    test = b"import os\ntry:\n    import uvloop\nexcept ImportError:\n    uvloop = None\n\nimport plumbum\n"
    found = check(extract("tests/test_subprocesses.py", test), test.decode(), learn(files, thresholds=HELD_RAISED))
    assert [(f.start_line, "`plumbum`" in f.message) for f in found if f.rule == RULE] == [(7, True)]


def test_automation_and_the_packages_tests_build_are_not_held_to_the_projects_libraries() -> None:
    """packaging's ``noxfile.py`` imports nox and its ``tasks/licenses.py`` httpx; pip-tools'
    ``tests/test_data/packages/small_fake_with_build_deps/backend/backend.py`` imports the fake
    package's build dependency. None of them is a library or test file bringing in a dependency of
    the project, so they neither weaken the habit nor are asked about it."""
    files = [py_file(f"src/packaging/m{i}.py", imports=[imp("os", 1)]) for i in range(20)]
    files += [py_file(f"tests/test_m{i}.py", imports=[imp("pytest", 1, group="third_party")]) for i in range(12)]
    fake = "tests/test_data/packages/small_fake_with_build_deps"
    others = [
        py_file("noxfile.py", imports=[imp("nox", 1, group="third_party")]),
        py_file("tasks/licenses.py", imports=[imp("httpx", 1, group="third_party")]),
        py_file(f"{fake}/setup.py", imports=[imp("setuptools", 1, group="third_party")]),
        py_file(f"{fake}/backend/backend.py", imports=[imp("fake_static_build_dep", 1, group="third_party")]),
    ]
    conv = next(c for c in learn(files, thresholds=HELD_RAISED).conventions if c.rule == RULE)
    assert (conv.count, conv.support, conv.level) == (32, 32, "strict")
    model = learn([*files, *others], thresholds=HELD_RAISED)
    conv = next(c for c in model.conventions if c.rule == RULE)
    assert (conv.count, conv.support, conv.level) == (32, 32, "strict")

    backend = py_file(f"{fake}/backend/other.py", imports=[imp("flit_core", 1, group="third_party")])
    assert [f.rule for f in check(backend, "import flit_core\n", model) if f.rule == RULE] == []
    test = py_file("tests/test_manylinux.py", imports=[imp("dill", 1, group="third_party")])
    assert [f.start_line for f in check(test, "import dill\n", model) if f.rule == RULE] == [1]


def _py_repo(package: str = "pkg", n: int = 30) -> list[FileFacts]:
    return [py_file(f"{package}/m{i}.py", imports=[imp("os", 1)]) for i in range(n)]


def test_setup_py_literal_requirements_are_declarations() -> None:
    """Python-Markdown's setup.py lists ``importlib-metadata`` for old interpreters in
    ``install_requires`` (a marker) and its test tools in ``extras_require``, read with ``ast``
    (a name bound to a literal list too), never run; an undeclared library is still new."""
    from services.analyzer.engine.toolconfig import setup_py_requirements

    setup_py = (
        "import os\nfrom setuptools import setup\n\n"
        "TESTING = ['coverage', 'pyyaml']\n\n"
        "setup(\n    name='Markdown',\n    version=os.environ.get('V', '3.0'),\n"
        "    install_requires=[\"importlib-metadata>=4.4;python_version<'3.10'\"],\n"
        "    extras_require={'testing': TESTING, 'docs': ['mkdocs>=1.0']},\n)\n"
    )
    assert setup_py_requirements(setup_py) == {"importlib_metadata", "coverage", "pyyaml", "mkdocs"}
    assert setup_py_requirements("from setuptools import setup\nsetup(install_requires=deps())\n") == set()
    model = learn(_py_repo("markdown"), tool_configs={"setup.py": setup_py}, thresholds=HELD_RAISED)
    imports = [imp("importlib_metadata", 1, group="third_party"), imp("yaml", 2, group="third_party")]
    imports.append(imp("plumbum", 3, group="third_party"))
    found = check(py_file("markdown/util.py", imports=imports), "import x\n" * 5, model)
    # yaml is the import name of the declared pyyaml (the job table knows it by that name).
    assert [(f.rule, f.start_line) for f in found] == [(RULE, 3)]


def test_a_namespace_distribution_and_a_tools_own_scope_are_declared_by_their_names() -> None:
    """urllib3 declares ``backports.zstd`` and imports ``from backports import zstd``; uuid's
    eslint.config.cjs requires ``@eslint/js``, which comes with the ``eslint`` it declares."""
    from services.analyzer.engine.dependencies import declares

    assert declares({"backports_zstd"}, "python", "backports", ["backports", "backports.zstd"])
    assert not declares({"backports_zstd"}, "python", "backports", ["backports", "backports.tarfile"])
    assert declares({"eslint"}, "javascript", "@eslint/js")
    assert not declares({"eslint"}, "javascript", "@babel/core")
    pyproject = '[project]\nname = "urllib3"\ndependencies = []\n[project.optional-dependencies]\n'
    pyproject += "zstd = [\"backports.zstd>=1.0.0; python_version<'3.14'\"]\n"
    model = learn(_py_repo("src/urllib3"), tool_configs={"pyproject.toml": pyproject}, thresholds=HELD_RAISED)
    zstd = Import(module="backports", names=("zstd",), line=1, group="third_party")
    tarfile = Import(module="backports", names=("tarfile",), line=1, group="third_party")
    assert [f for f in check(py_file("test/test_response.py", imports=[zstd]), "x\n", model) if f.rule == RULE] == []
    found = check(py_file("test/test_response.py", imports=[tarfile]), "x\n", model)
    assert [f.start_line for f in found if f.rule == RULE] == [1]


def test_a_directory_with_its_own_requirements_declares_what_its_files_import() -> None:
    """gunicorn's docker framework-compat suite: each app directory under ``frameworks/`` has a
    requirements.txt (and Dockerfile) installing the framework its app.py imports, and the suite's
    conftest.py the client libraries its own requirements.txt lists. Elsewhere they are new."""
    from services.analyzer.engine.toolconfig import read

    suite = "tests/docker/compat"
    configs = {
        "requirements.txt": "-r requirements/base.txt\nsphinx  # docs\n",
        f"{suite}/requirements.txt": "# suite\npytest>=8.0.0\nwebsockets>=12.0\nhttpx>=0.27.0\n",
        f"{suite}/frameworks/django_app/requirements.txt": "Django>=5.0\nchannels>=4.0.0\nuvloop>=0.19.0\n",
        "requirements/dev.txt": "-e .\ntox\n",
    }
    tools = read(configs)
    assert tools.libraries == {"sphinx", "tox"}
    assert tools.scoped_libraries[f"{suite}/frameworks/django_app"] == {"django", "channels", "uvloop"}
    model = learn(_py_repo("gunicorn"), tool_configs=configs, thresholds=HELD_RAISED)

    def new(path: str, *libs: str) -> list[str]:
        facts = py_file(path, imports=[imp(lib, i + 1, group="third_party") for i, lib in enumerate(libs)])
        return [f.anchor for f in check(facts, "x\n" * 5, model) if f.rule == RULE]

    assert new(f"{suite}/conftest.py", "websockets", "channels") == ["channels"]
    assert new(f"{suite}/frameworks/django_app/asgi.py", "channels", "websockets", "blacksheep") == ["blacksheep"]
    assert new("gunicorn/workers/new.py", "websockets") == ["websockets"]


def test_a_fixture_package_declared_by_its_pyproject_declares_its_build_dependency() -> None:
    """pip-tools' ``tests/test_data/packages/small_fake_with_build_deps/``: its pyproject.toml's
    [build-system] requires the fake build dependency that its in-tree backend imports (no
    setup.py in the model to mark the directory); the project's own code still may not."""
    fake = "tests/test_data/packages/small_fake_with_build_deps"
    manifest = (
        '[build-system]\nrequires = ["setuptools==68.1.2", "wheel", "fake_static_build_dep"]\n'
        'build-backend = "backend"\nbackend-path = ["backend"]\n'
    )
    model = learn(_py_repo("piptools"), tool_configs={f"{fake}/pyproject.toml": manifest}, thresholds=HELD_RAISED)
    assert model.declared_libraries == ()
    backend = py_file(f"{fake}/backend/backend.py", imports=[imp("fake_static_build_dep", 5, group="third_party")])
    assert [f for f in check(backend, "x\n" * 5, model) if f.rule == RULE] == []
    code = py_file("piptools/build.py", imports=[imp("fake_static_build_dep", 5, group="third_party")])
    assert [f.start_line for f in check(code, "x\n" * 5, model) if f.rule == RULE] == [5]


def test_a_local_pre_commit_hook_declares_the_environment_of_the_script_it_runs() -> None:
    """trio's ``sync-test-requirements`` hook (``repo: local``, ``entry: python
    src/trio/_tools/sync_requirements.py``) installs pyyaml, which that script imports as yaml;
    another repository's hook's extra dependencies (a mypy mirror's) declare nothing."""
    from services.analyzer.engine.toolconfig import read

    config = (
        "repos:\n  - repo: https://github.com/pre-commit/mirrors-mypy\n    rev: v1.0.0\n    hooks:\n"
        "      - id: mypy\n        additional_dependencies: [plumbum]\n"
        "  - repo: local\n    hooks:\n      - id: sync-test-requirements\n        name: sync\n"
        "        language: python\n        entry: python src/trio/_tools/sync_requirements.py\n"
        '        pass_filenames: false\n        additional_dependencies: ["pyyaml"]\n'
    )
    assert read({".pre-commit-config.yaml": config}).libraries == {"pyyaml"}
