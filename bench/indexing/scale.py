"""The scale corpus: every ``.py`` file of this machine's Python installations as one repository
with a few hundred real-looking commits (issue #23: a one-file re-index at 50k+ files).

Built, never committed: ``python -m bench.indexing.scale`` writes ``bench/.work/corpus/scale``
(a git work tree). The roots, in order, each under its own top directory of the repository:

- the venv's ``site-packages`` (``sysconfig`` ``purelib``) -> ``site-packages/``;
- the standard library of the running interpreter (with its own ``site-packages``) -> ``stdlib/``;
- the standard library (with its own ``site-packages``) of every other interpreter installed
  beside it (pyenv: ``<base_prefix>/../*/lib/python*``) -> ``pythons/<version>/``;
- ``/usr/lib/python3*`` -> ``system/<name>/`` and ``/usr/lib/google-cloud-sdk`` -> ``vendor/``
  when present (the rest of the machine's Python code, needed to pass 50k files here).

``__pycache__`` is left out and so are symlinks. The history is made with ``git fast-import``
from a seeded random generator, so the same roots always give the same commits: an import of
the tree, then ``--commits`` commits by a dozen authors over a year, each touching one to six
files of one package (a function added, a docstring line, a helper removed again), with every
tenth a cross-package change of up to 40 files and a few new modules with their tests. Commit
messages follow the usual shapes (``Fix ...``, ``Add ...``, ``Refactor ...``, ``Bump version``).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.indexing.corpus import WORK, git

SCALE_REPO = WORK / "corpus" / "scale"
_EPOCH = 1_735_689_600  # 2025-01-01 UTC: the first commit's time

_AUTHORS = [
    ("Ada Moreau", "ada@example.org"),
    ("Bram Visser", "bram@example.org"),
    ("Chen Wei", "chen.wei@example.org"),
    ("Dana Okafor", "dana@example.org"),
    ("Eli Navarro", "eli@example.org"),
    ("Fatima Rahman", "fatima@example.org"),
    ("Gus Lindqvist", "gus@example.org"),
    ("Hana Sato", "hana@example.org"),
    ("Ivan Petrov", "ivan@example.org"),
    ("Jo Kim", "jo@example.org"),
    ("Kemal Aydin", "kemal@example.org"),
    ("Lena Fischer", "lena@example.org"),
]
_VERBS = ["Fix", "Add", "Refactor", "Handle", "Simplify", "Document", "Speed up", "Clean up", "Support", "Guard"]
_OBJECTS = [
    "edge case in {m}",
    "error path of {m}",
    "{m} helper",
    "parsing in {m}",
    "{m} when input is empty",
    "type hints of {m}",
    "retry logic in {m}",
    "{m} docstrings",
    "caching in {m}",
    "unicode handling in {m}",
]


def default_roots() -> list[tuple[str, Path]]:
    """(top directory in the repository, directory on this machine), existing ones only."""
    paths = sysconfig.get_paths()
    roots: list[tuple[str, Path]] = [("site-packages", Path(paths["purelib"])), ("stdlib", Path(paths["stdlib"]))]
    here = Path(paths["stdlib"]).resolve()
    versions = Path(sys.base_prefix).resolve().parent
    for lib in sorted(versions.glob("*/lib/python*")):
        if lib.is_dir() and not lib.is_symlink() and lib.resolve() != here:
            roots.append((f"pythons/{lib.parents[1].name}", lib))
    for lib in sorted(Path("/usr/lib").glob("python3*")):
        if lib.is_dir() and not lib.is_symlink():
            roots.append((f"system/{lib.name}", lib))
    sdk = Path("/usr/lib/google-cloud-sdk")
    if sdk.is_dir():
        roots.append(("vendor/google-cloud-sdk", sdk))
    return [(top, root) for top, root in roots if root.is_dir()]


def collect(roots: list[tuple[str, Path]]) -> dict[str, Path]:
    """Repository path -> file, every regular ``.py`` file under the roots (sorted walk)."""
    files: dict[str, Path] = {}
    for top, root in roots:
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" in path.parts or path.is_symlink() or not path.is_file():
                continue
            files.setdefault(f"{top}/{path.relative_to(root).as_posix()}", path)
    return files


@dataclass
class _History:
    rng: random.Random
    files: dict[str, Path]
    content: dict[str, bytes] = field(default_factory=dict)  # current text of touched files
    added: dict[str, list[str]] = field(default_factory=dict)  # helpers added per file (removable)
    by_package: dict[str, list[str]] = field(default_factory=dict)
    serial: int = 0

    def __post_init__(self) -> None:
        for path in self.files:
            self.by_package.setdefault(path.rsplit("/", 1)[0], []).append(path)
        self.packages = sorted(p for p, members in self.by_package.items() if len(members) >= 3)

    def text(self, path: str) -> bytes:
        if path not in self.content:
            self.content[path] = self.files[path].read_bytes()
        return self.content[path]

    def edit(self, path: str) -> bytes:
        """One real-looking change to ``path``: a helper added, one removed again, or a comment."""
        self.serial += 1
        data = self.text(path)
        helpers = self.added.setdefault(path, [])
        roll = self.rng.random()
        if helpers and roll < 0.25:
            name = helpers.pop()
            start = data.rfind(f"\n\ndef {name}(".encode())
            end = data.find(b"\n# end " + name.encode(), start)
            if start >= 0 and end >= 0:
                data = data[:start] + data[end + len(name) + 7 :]
        elif roll < 0.45:
            data += f"\n# Note {self.serial}: keep the behaviour above stable (see the tests).\n".encode()
        else:
            name = f"_helper_{self.serial}"
            helpers.append(name)
            body = self.rng.choice(
                [
                    "    if value is None:\n        return default\n    return value",
                    "    result = []\n    for item in value or ():\n        result.append(item)\n    return result",
                    "    try:\n        return int(value)\n    except (TypeError, ValueError):\n        return default",
                ]
            )
            data += f"\n\ndef {name}(value, default=None):\n{body}\n# end {name}\n".encode()
        self.content[path] = data
        return data

    def new_module(self, package: str) -> dict[str, bytes]:
        self.serial += 1
        name = f"feature_{self.serial}"
        module = f"{package}/{name}.py"
        test = f"{package}/test_{name}.py"
        dotted = module[:-3].replace("/", ".").split(".")[-1]
        self.content[module] = (
            f'"""Feature {self.serial}."""\n\n\ndef run_{self.serial}(items):\n    return sorted(set(items))\n'
        ).encode()
        self.content[test] = (
            f"from .{dotted} import run_{self.serial}\n\n\ndef test_run_{self.serial}():\n"
            f"    assert run_{self.serial}([2, 1, 2]) == [1, 2]\n"
        ).encode()
        for path in (module, test):
            self.by_package.setdefault(package, []).append(path)
        return {module: self.content[module], test: self.content[test]}

    def commit(self, index: int) -> tuple[str, dict[str, bytes]]:
        package = self.rng.choice(self.packages)
        label = package.rsplit("/", 1)[-1]
        if index % 37 == 0:
            return f"Add {label} feature {self.serial + 1} with tests", self.new_module(package)
        if index % 10 == 0:  # a cross-package change (a sweep)
            paths = self.rng.sample(sorted(self.files), self.rng.randint(8, 40))
            return f"Clean up {label} and related modules", {p: self.edit(p) for p in paths}
        members = self.by_package[package]
        paths = self.rng.sample(members, min(len(members), self.rng.randint(1, 6)))
        message = f"{self.rng.choice(_VERBS)} {self.rng.choice(_OBJECTS).format(m=label)}"
        return message, {p: self.edit(p) for p in paths if p in self.files or p in self.content}


def _data(blob: bytes) -> bytes:
    return b"data %d\n" % len(blob) + blob + b"\n"


def _stream(files: dict[str, Path], commits: int, seed: int) -> Iterator[bytes]:
    rng = random.Random(seed)
    history = _History(rng, files)
    when = _EPOCH
    yield b"commit refs/heads/main\n"
    yield b"author Ada Moreau <ada@example.org> %d +0000\n" % when
    yield b"committer Ada Moreau <ada@example.org> %d +0000\n" % when
    yield _data(b"Import the tree")
    for path in sorted(files):
        yield b"M 100644 inline " + path.encode() + b"\n" + _data(files[path].read_bytes())
    yield b"\n"
    for index in range(1, commits + 1):
        when += rng.randint(600, 86_400)
        message, changes = history.commit(index)
        name, email = rng.choice(_AUTHORS)
        yield b"commit refs/heads/main\n"
        yield f"author {name} <{email}> {when} +0000\ncommitter {name} <{email}> {when} +0000\n".encode()
        yield _data(message.encode())
        for path in sorted(changes):
            yield b"M 100644 inline " + path.encode() + b"\n" + _data(changes[path])
        yield b"\n"


def build(
    repo: Path = SCALE_REPO, commits: int = 300, seed: int = 23, roots: list[tuple[str, Path]] | None = None
) -> Path:
    """Make the corpus repository at ``repo`` (replacing it) and check its work tree out."""
    files = collect(roots if roots is not None else default_roots())
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=repo, stdin=subprocess.PIPE)
    assert proc.stdin is not None
    for chunk in _stream(files, commits, seed):
        proc.stdin.write(chunk)
    proc.stdin.write(b"done\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise RuntimeError("git fast-import failed")
    git(repo, "checkout", "-q", "-f", "main")
    (repo / ".git" / "bench-origin").write_text(
        f"{len(files)} .py files of this machine's Python installations, {commits} commits, seed {seed}\n"
    )
    return repo


def prepare_scale(commits: int = 300) -> Path:
    """The corpus, built once and reused (``--rebuild`` to start again)."""
    if (SCALE_REPO / ".git" / "bench-origin").is_file():
        return SCALE_REPO
    return build(SCALE_REPO, commits)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.indexing.scale", description=__doc__)
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--seed", type=int, default=23)
    parser.add_argument("--list-roots", action="store_true")
    args = parser.parse_args(argv)
    roots = default_roots()
    if args.list_roots:
        for top, root in roots:
            print(f"{top:<32} {root}")
        return 0
    repo = build(SCALE_REPO, args.commits, args.seed, roots)
    print(
        f"{repo}: {git(repo, 'ls-files').count(chr(10)) + 1} files, {git(repo, 'rev-list', '--count', 'HEAD')} commits"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
