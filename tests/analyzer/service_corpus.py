"""A small repository with one consistent style, for the analyzer's service and e2e tests.

45 Python modules in three packages plus a test per module: snake_case functions, CapWords
classes, docstrings and annotations everywhere, 4-space indents, double quotes, logging through
``logging.getLogger(__name__)``, never ``print`` and never a bare ``except``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

PACKAGES = ("accounts", "billing", "reports")
NOUNS = ("user", "invoice", "order", "ledger", "payment", "report", "account", "session", "profile", "record",
         "entry", "batch", "export", "import_job", "summary")  # fmt: skip


def module_source(package: str, noun: str, i: int) -> str:
    cls = "".join(part.capitalize() for part in noun.split("_"))
    return f'''"""The {noun} records of the {package} package."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

DEFAULT_LIMIT = {10 + i}


class {cls}Store:
    """Keeps {noun} records in memory, keyed by id."""

    def __init__(self, limit: int = DEFAULT_LIMIT) -> None:
        self.limit = limit
        self.items: dict[str, dict[str, str]] = {{}}

    def add_{noun}(self, {noun}_id: str, name: str) -> None:
        """Store one {noun} under its id."""
        if len(self.items) >= self.limit:
            log.warning("store is full: %s", {noun}_id)
            return
        self.items[{noun}_id] = {{"name": name, "kind": "{noun}"}}

    def get_{noun}(self, {noun}_id: str) -> dict[str, str] | None:
        """The {noun} stored under the id, if any."""
        return self.items.get({noun}_id)


def load_{noun}_names(store: {cls}Store, user_id: str) -> list[str]:
    """Names of every {noun} the user can see."""
    names = []
    for key, value in store.items.items():
        if key.startswith(user_id):
            names.append(value["name"])
    log.info("loaded %d names", len(names))
    return names


def count_{noun}_items(store: {cls}Store) -> int:
    """How many {noun} records are stored."""
    try:
        return len(store.items)
    except TypeError as exc:
        log.error("bad store: %s", exc)
        raise


def format_{noun}_label(name: str, prefix: str = "item") -> str:
    """A display label for one {noun}."""
    label = f"{{prefix}}: {{name}}"
    return label.strip()
'''


def test_source(package: str, noun: str) -> str:
    cls = "".join(part.capitalize() for part in noun.split("_"))
    return f'''"""Tests of the {noun} store."""

from __future__ import annotations

from app.{package}.{noun} import {cls}Store, count_{noun}_items


def test_add_and_count_{noun}() -> None:
    """Adding one {noun} counts one."""
    store = {cls}Store()
    store.add_{noun}("u1", "first")
    assert count_{noun}_items(store) == 1
'''


# This team documents every public function, tests every module, keeps its names, libraries and
# idioms, and wants a pull request told when one is not: it raises those rules, held loose until they
# earn strict on real changes (engine/earned.py), at their default bars (``{}``).
CONFIG_FILE = ".codereview.yml"
RAISED = (
    "dependencies.library.new",
    "dependencies.library.testing",
    "documentation.docstring.method",
    "idioms.broad_except",
    "idioms.print",
    "naming.case.class",
    "naming.case.constant",
    "naming.case.file",
    "naming.case.function",
    "naming.case.method",
    "naming.case.variable",
    "structure.tests.naming",
)
CONFIG = (
    "version: 1\nthresholds:\n"
    "  documentation.docstring.function: {strict: {min_share: 0.9, min_count: 20}}\n"
    "  structure.tests.coverage: {strict: {min_share: 0.9, min_count: 10}}\n"
    + "".join(f"  {rule}: {{}}\n" for rule in RAISED)
)


def write_corpus(root: Path) -> list[str]:
    """Write the repository's files under ``root``; returns their paths."""
    paths: list[str] = []
    (root / "app").mkdir(parents=True, exist_ok=True)
    (root / CONFIG_FILE).write_text(CONFIG)
    paths.append(CONFIG_FILE)
    (root / "app" / "__init__.py").write_text('"""The application."""\n')
    paths.append("app/__init__.py")
    for p_index, package in enumerate(PACKAGES):
        pkg = root / "app" / package
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text(f'"""The {package} package."""\n')
        paths.append(f"app/{package}/__init__.py")
        for n_index, noun in enumerate(NOUNS):
            (pkg / f"{noun}.py").write_text(module_source(package, noun, p_index * 20 + n_index))
            paths.append(f"app/{package}/{noun}.py")
            tests = root / "tests" / package
            tests.mkdir(parents=True, exist_ok=True)
            (tests / f"test_{noun}.py").write_text(test_source(package, noun))
            paths.append(f"tests/{package}/test_{noun}.py")
    return paths


# A module of the repository's own style with planted deviations, one per line marked below.
PLANTED = '''"""The audit trail of the accounts package."""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)


class AuditStore:
    """Keeps audit records in memory, keyed by id."""

    def __init__(self, limit: int = 10) -> None:
        self.limit = limit
        self.items: dict[str, dict[str, str]] = {}

    def add_audit(self, audit_id: str, name: str) -> None:
        """Store one audit under its id."""
        self.items[audit_id] = {"name": name, "kind": "audit"}


def loadAuditNames(store: AuditStore, user_id: str) -> list[str]:
    """Names of every audit the user can see."""
    names = []
    for key, value in store.items.items():
        if key.startswith(user_id):
            names.append(value["name"])
    log.info("loaded %d names", len(names))
    return names


def count_audit_items(store: AuditStore) -> int:
    return len(store.items)


def format_audit_label(name: str, prefix: str = "item") -> str:
    """A display label for one audit."""
    label = f"{prefix}: {name}"
    print(label)
    return label.strip()
'''
PLANTED_PATH = "app/accounts/audit.py"


def git(root: Path, *args: str) -> str:
    env_args = ["-c", "user.email=dev@example.com", "-c", "user.name=Dev", "-c", "commit.gpgsign=false"]
    done = subprocess.run(["git", *env_args, *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def make_git_repo(root: Path) -> str:
    """A git repository of the corpus with a few commits of history; returns the head sha."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    write_corpus(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial import")
    # History where two files always change together, for co-change conventions.
    for i in range(6):
        for path in ("app/billing/invoice.py", "app/billing/payment.py"):
            with (root / path).open("a") as fh:
                fh.write(f"\n\nREVISION_{i} = {i}\n")
        git(root, "commit", "-q", "-am", f"bump invoice and payment revision {i}")
    return git(root, "rev-parse", "HEAD")
