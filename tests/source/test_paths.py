"""Path conventions: test files, what they test, module names."""

from __future__ import annotations

import pytest

from services.source import paths  # not `import tested_stem`: pytest would collect it
from services.source.paths import is_run_file, is_test_path, is_tool_config, is_vendored, module_name


@pytest.mark.parametrize(
    ("path", "language", "expected"),
    [
        ("tests/test_models.py", "python", True),
        ("pkg/models_test.py", "python", True),
        ("conftest.py", "python", True),
        ("pkg/tests/helpers.py", "python", True),
        ("pkg/models.py", "python", False),
        ("pkg/testing_utils.py", "python", False),
        ("src/money.test.ts", "typescript", True),
        ("src/money.spec.js", "javascript", True),
        ("src/__tests__/Button.tsx", "tsx", True),
        ("src/latest.ts", "typescript", False),
        ("store/store_test.go", "go", True),
        ("store/testdata.go", "go", False),
        ("src/test/java/com/acme/StoreTest.java", "java", True),
        ("src/main/java/com/acme/Store.java", "java", False),
        ("app/src/test/kotlin/StoreSpec.kt", "kotlin", True),
        ("Acme.Store.Tests/StoreTests.cs", "csharp", True),
        ("spec/models/user_spec.rb", "ruby", True),
        ("test/test_user.rb", "ruby", True),
        ("lib/user.rb", "ruby", False),
        ("tests/api.rs", "rust", True),
        ("src/lib.rs", "rust", False),
        ("tests/Unit/UserTest.php", "php", True),
        ("src/util_unittest.cc", "cpp", True),
    ],
)
def test_is_test_path(path: str, language: str, expected: bool) -> None:
    assert is_test_path(path, language) is expected


@pytest.mark.parametrize(
    ("path", "language", "stem"),
    [
        ("tests/test_models.py", "python", "models"),
        ("pkg/models_test.py", "python", "models"),
        ("conftest.py", "python", ""),
        ("src/money.test.ts", "typescript", "money"),
        ("src/Button.spec.jsx", "javascript", "Button"),
        ("store/store_test.go", "go", "store"),
        ("src/test/java/StoreTest.java", "java", "Store"),
        ("src/test/java/TestStore.java", "java", "Store"),
        ("StoreTests.cs", "csharp", "Store"),
        ("spec/user_spec.rb", "ruby", "user"),
        ("test/test_user.rb", "ruby", "user"),
        ("tests/api.rs", "rust", "api"),
    ],
)
def test_tested_stem(path: str, language: str, stem: str) -> None:
    assert paths.tested_stem(path, language) == stem


def test_module_names() -> None:
    assert module_name("pkg/sub/mod.py", "python") == "pkg.sub.mod"
    assert module_name("pkg/sub/__init__.py", "python") == "pkg.sub"
    assert module_name("src/pkg/mod.py", "python") == "pkg.mod"
    assert module_name("lib/pkg/mod.py", "python") == "pkg.mod"
    assert module_name("pkg/lib/mod.py", "python") == "pkg.lib.mod"  # only a leading lib/ is a root
    assert module_name("services/api/src/api/app.py", "python") == "api.app"
    assert module_name("src/app/util.ts", "typescript") == "src/app/util"
    assert module_name("cmd/main.go", "go") == "cmd/main"


def test_vendored_paths() -> None:
    assert is_vendored("vendor/github.com/x/y.go")
    assert is_vendored("a/third_party/lib.c")
    assert is_vendored("static/jquery.min.js")
    assert not is_vendored("src/vendors.py")
    assert not is_vendored("src/vendor_api.go")


def test_run_files_are_served_with_the_tool_configurations() -> None:
    # What says which checkers the project runs: root task runners and CI workflows.
    for path in ("noxfile.py", "Makefile", "justfile", ".github/workflows/ci.yml", ".github/workflows/lint.yaml"):
        assert is_run_file(path), path
        assert is_tool_config(path), path
    for path in ("docs/Makefile", "src/noxfile.py", ".github/workflows/scripts/x.yml", ".github/dependabot.yml"):
        assert not is_run_file(path), path
