"""The quality benchmark's own parser and the corpora reader (pure, no services, no network)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench import repos
from bench.quality import reader
from bench.quality.__main__ import sources_of


@pytest.mark.parametrize(
    ("name", "style"),
    [
        ("load_user", reader.SNAKE),
        ("loadUser", reader.CAMEL),
        ("LoadUser", reader.PASCAL),
        ("MAX_SIZE", reader.UPPER),
        ("user", reader.NONE),
        ("__init__", reader.DUNDER),
        ("_private_name", reader.SNAKE),
    ],
)
def test_case_styles(name: str, style: str) -> None:
    assert reader.case_style(name) == style


def test_words_convert_and_replace() -> None:
    assert reader.words("parseHTTPResponse") == ["parse", "http", "response"]
    assert reader.convert("load_user_names", reader.CAMEL) == "loadUserNames"
    assert reader.convert("_loadUser", reader.SNAKE) == "_load_user"
    assert reader.replace_word("sendMessage", 1, "msg") == "sendMsg"
    assert reader.replace_word("SEND_MESSAGE", 1, "msg") == "SEND_MSG"


def test_python_roles_imports_and_resolution() -> None:
    text = (
        "import os\n"
        "from .models import User\n"
        "LIMIT = 3\n"
        "class Store:\n"
        "    kind = 'x'\n"
        "    def save(self, item_id):\n"
        "        self.last_id = item_id\n"
        "        for row in item_id:\n"
        "            pass\n"
        "def load(path):\n"
        "    return path\n"
    )
    files = {
        "pkg/store.py": reader.read("pkg/store.py", text),
        "pkg/models.py": reader.read("pkg/models.py", "class User:\n    pass\n"),
    }
    reader.resolve(files)
    roles = {(i.name, i.role) for i in files["pkg/store.py"].identifiers}
    assert {
        ("LIMIT", "constant"),
        ("Store", "class"),
        ("kind", "attribute"),
        ("save", "method"),
        ("item_id", "parameter"),
        ("last_id", "attribute"),
        ("row", "variable"),
        ("load", "function"),
    } <= roles
    assert ("self", "parameter") not in roles
    imports = {(i.module, i.resolved) for i in files["pkg/store.py"].imports}
    assert imports == {("os", ""), (".models", "pkg/models.py")}
    assert [d.name for d in files["pkg/store.py"].definitions] == ["Store", "save", "load"]


def test_javascript_ignores_comments_and_strings() -> None:
    text = (
        "import { join } from './util.js';\n"
        "const fs = require('fs');\n"
        "// function notReal() {}\n"
        "const label = 'function fake() {}';\n"
        "export function readFile(filePath, options = {}) {\n"
        "  const buffer = fs.readFileSync(filePath);\n"
        "  return buffer;\n"
        "}\n"
        "class Reader {\n"
        "  readLine(lineNo) {\n"
        "    return lineNo;\n"
        "  }\n"
        "}\n"
    )
    files = {"src/read.js": reader.read("src/read.js", text), "src/util.ts": reader.read("src/util.ts", "")}
    reader.resolve(files)
    f = files["src/read.js"]
    roles = {(i.name, i.role) for i in f.identifiers}
    assert {("readFile", "function"), ("filePath", "parameter"), ("options", "parameter")} <= roles
    assert {("buffer", "variable"), ("Reader", "class"), ("readLine", "method"), ("lineNo", "parameter")} <= roles
    assert not {n for n, _ in roles} & {"notReal", "fake"}
    assert {(i.module, i.resolved) for i in f.imports} == {("./util.js", "src/util.ts"), ("fs", "")}


def test_corpora_read_at_the_pinned_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x"}

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    (work / "a.py").write_text("x = 1\n")
    (work / "node_modules").mkdir()
    (work / "node_modules" / "m.js").write_text("x\n")
    (work / "README.md").write_text("hi\n")
    git("add", "-A")
    git("commit", "-q", "-m", "one")
    pinned = git("rev-parse", "HEAD").strip()
    (work / "a.py").write_text("x = 2\n")
    git("commit", "-q", "-am", "two")
    bare = tmp_path / "mirror" / "someone+thing" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    listing = tmp_path / "corpora.toml"
    listing.write_text(
        f'[[repository]]\nname = "someone/thing"\ncommit = "{pinned}"\nlanguage = "python"\n\n'
        '[[repository]]\nname = "nobody/absent"\ncommit = "0000000000000000000000000000000000000000"\n'
        'language = "python"\n\n'
        f'[[repository]]\nname = "someone/thing"\ncommit = "{pinned}"\nlanguage = "python"\nset = "fresh"\n\n'
        f'[[repository]]\nname = "someone/thing"\ncommit = "{pinned}"\nlanguage = "python"\nset = "fresh2"\n'
    )
    monkeypatch.setattr(repos, "CORPORA", listing)
    monkeypatch.setenv("CR_BENCH_REPOS", str(tmp_path / "mirror"))
    found = repos.corpora()
    assert [c.name for c in found] == ["someone/thing"]
    assert repos.files_at(found[0]) == {"a.py": b"x = 1\n"}
    # The fresh set stays out of the default runs, which were tuned on, and is read only when asked for.
    assert len(repos.corpora(sets=("fresh",))) == 1
    assert len(repos.corpora(sets=("unseen", "fresh"))) == 2
    # A later out-of-sample set is read by its name alone, by the replay and the planted benchmark.
    assert len(repos.corpora(sets=("fresh2",))) == 1
    assert [(s.name, s.group) for s in sources_of(["fresh2"], [])] == [("someone/thing", "fresh2")]
