"""The fetched corpora (``bench/corpora.toml``): bare git directories read at pinned commits.

Nothing is fetched here. ``CR_BENCH_REPOS`` (default ``/work/.mirror``) holds one bare git
directory per repository, as ``<owner>+<name>/repo`` (what the library's fetch tool makes),
``<owner>+<name>`` or ``<owner>/<name>``; a repository that is missing, or lacks its pinned
commit, is skipped with a message on stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from services.source.paths import SETUP_PY, is_requirements, is_run_file

CORPORA = Path(__file__).resolve().parent / "corpora.toml"
DEFAULT_ROOT = "/work/.mirror"
# Stubs are source the service indexes (a `.pyi` types its module: more-itertools' more.pyi).
SOURCE_EXTENSIONS = (".py", ".pyi", ".js", ".mjs", ".cjs", ".ts", ".tsx")
_SKIP_DIRS = frozenset({"node_modules", "dist", "build", "vendor", "vendored", "_vendor", "third_party", "site"})
_MAX_BYTES = 400_000
# Configuration files a user's repository carries and a reviewer would read for declared
# conventions (formatters, linters, editors); registered with the source files.
CONFIG_NAMES = frozenset(
    {
        *("pyproject.toml", "setup.cfg", "tox.ini", ".flake8", ".pylintrc", "pylintrc", ".isort.cfg"),
        *("ruff.toml", ".ruff.toml", ".editorconfig", ".codereview.yml", "package.json", "tsconfig.json"),
        *(".prettierrc", ".prettierrc.json", ".prettierrc.yaml", ".prettierrc.yml", "prettier.config.js"),
        *(".eslintrc", ".eslintrc.json", ".eslintrc.yaml", ".eslintrc.yml", ".eslintrc.js", "eslint.config.js"),
        *("eslint.config.mjs", "biome.json", "biome.jsonc", ".pre-commit-config.yaml", ".prettierignore"),
        *(".eslintignore", ".jshintignore", ".codespellrc", "mypy.ini", ".mypy.ini"),
        *("eslint.config.cjs", "eslint.config.ts", ".xo-config", ".xo-config.json", ".xo-config.js"),
        *(".xo-config.cjs", "xo.config.js", "xo.config.cjs", "xo.config.mjs", "xo.config.ts"),
    }
)
# Files that say which tools are run (``is_run_file``: root task runners, CI workflows) are read as
# the service reads them; noxfile.py is source besides, read as a configuration too, like setup.py.
NOXFILE = "noxfile.py"


@dataclass(frozen=True)
class Corpus:
    name: str  # owner/name
    commit: str
    language: str  # the main language (python | javascript | typescript)
    git_dir: Path

    @property
    def short(self) -> str:
        return self.name.split("/", 1)[1]


def root() -> Path:
    return Path(os.environ.get("CR_BENCH_REPOS") or DEFAULT_ROOT)


def _git_dir(base: Path, name: str) -> Path | None:
    owner, repo = name.split("/", 1)
    for cand in (base / f"{owner}+{repo}" / "repo", base / f"{owner}+{repo}", base / owner / repo):
        if (cand / "HEAD").exists() and (cand / "objects").exists():
            return cand
    return None


def git(git_dir: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], input=data, capture_output=True, check=True).stdout


def corpora(wanted: list[str] | None = None, language: str = "", sets: tuple[str, ...] = ("unseen",)) -> list[Corpus]:
    """The listed repositories of ``sets`` present on this machine (a missing one is named on stderr).

    An entry's ``set`` (default ``unseen``) keeps apart the repositories measured before anything
    was tuned on them (``fresh``): once tuned on they would be in-sample like the rest."""
    listed = tomllib.loads(CORPORA.read_text())["repository"]
    base = root()
    out = []
    for entry in listed:
        name = entry["name"]
        if entry.get("set", "unseen") not in sets:
            continue
        if wanted and not any(w.lower() in name.lower() for w in wanted):
            continue
        if language and (entry["language"] == "python") != (language == "python"):
            continue
        found = _git_dir(base, name)
        if found is None:
            print(f"skipped {name}: no bare git directory under {base} (CR_BENCH_REPOS)", file=sys.stderr)
            continue
        try:
            git(found, "cat-file", "-e", f"{entry['commit']}^{{commit}}")
        except subprocess.CalledProcessError:
            print(f"skipped {name}: commit {entry['commit'][:12]} not in {found}", file=sys.stderr)
            continue
        out.append(Corpus(name, entry["commit"], entry["language"], found))
    return out


def wanted_path(path: str) -> bool:
    """A source file the benchmark reads (not vendored, built, minified or a declaration file)."""
    if not path.endswith(SOURCE_EXTENSIONS) or path.endswith((".d.ts", ".min.js")):
        return False
    return not (_SKIP_DIRS & set(path.split("/")[:-1]))


def is_config(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    if is_run_file(path) and path != NOXFILE:  # a task runner or CI workflow (noxfile.py is source)
        return True
    return (name in CONFIG_NAMES or is_requirements(path)) and not (_SKIP_DIRS & set(path.split("/")[:-1]))


def read_as_config(path: str) -> bool:
    """A configuration file, or a source file also read for what it declares (setup.py's
    dependencies): the analyzer is given its text as a tool configuration too."""
    return is_config(path) or (path.rsplit("/", 1)[-1] == SETUP_PY and wanted_path(path)) or path == NOXFILE


def tree(git_dir: Path, commit: str, configs: bool = False) -> dict[str, str]:
    """path -> blob sha of the source files at ``commit`` (and configuration files)."""
    out: dict[str, str] = {}
    for line in git(git_dir, "ls-tree", "-r", "-z", "--full-tree", commit).split(b"\0"):
        if not line:
            continue
        meta, _, path = line.decode("utf-8", "replace").partition("\t")
        mode, kind, sha = meta.split(" ")
        if kind == "blob" and mode != "120000" and (wanted_path(path) or (configs and is_config(path))):
            out[path] = sha
    return out


class Blobs:
    """Blob contents by sha through one ``git cat-file --batch`` process, cached."""

    def __init__(self, git_dir: Path) -> None:
        self.proc = subprocess.Popen(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.cache: dict[str, bytes | None] = {}

    def get(self, sha: str) -> bytes | None:
        if sha in self.cache:
            return self.cache[sha]
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.write(sha.encode() + b"\n")
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().split()
        data: bytes | None = None
        if len(header) == 3:
            size = int(header[2])
            data = self.proc.stdout.read(size)
            self.proc.stdout.read(1)
            if size > _MAX_BYTES or b"\0" in data[:8000]:
                data = None
        self.cache[sha] = data
        return data

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()


def files_at(corpus: Corpus, commit: str = "", configs: bool = False) -> dict[str, bytes]:
    """path -> content of the source files at ``commit`` (default: the pinned one), with the
    configuration files when ``configs``."""
    blobs = Blobs(corpus.git_dir)
    try:
        out = {}
        for path, sha in sorted(tree(corpus.git_dir, commit or corpus.commit, configs).items()):
            data = blobs.get(sha)
            if data is not None:
                out[path] = data
        return out
    finally:
        blobs.close()
