"""Shared pieces of the indexer service and pipeline tests: git repositories built with the
CLI, callers (principals), an index job run in-process with a stand-in JetStream message."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select

from services.contracts.v1 import common_pb2, events_pb2
from services.indexer.models import IndexRun
from services.indexer.settings import IndexerSettings
from services.indexer.worker import IndexWorker
from services.kit.db import Database
from services.kit.identity import principal_var

T0 = 1_700_000_000


def git(cwd: Path, *args: str, at: int = T0, who: str = "alice") -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(cwd),
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": who.title(),
        "GIT_AUTHOR_EMAIL": f"{who}@example.com",
        "GIT_COMMITTER_NAME": who.title(),
        "GIT_COMMITTER_EMAIL": f"{who}@example.com",
        "GIT_AUTHOR_DATE": f"@{at} +0000",
        "GIT_COMMITTER_DATE": f"@{at} +0000",
    }
    out = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", *args], cwd=cwd, env=env, check=True, capture_output=True
    )
    return out.stdout.decode().strip()


def write(repo: Path, files: dict[str, str | bytes]) -> None:
    for path, content in files.items():
        target = repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)


def commit(repo: Path, files: dict[str, str | bytes], message: str, *, at: int = T0, who: str = "alice") -> str:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, at=at, who=who)
    return git(repo, "rev-parse", "HEAD")


def init_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    return path


SAMPLE = {
    "app/__init__.py": "",
    "app/models.py": (
        'class User:\n    """A user."""\n\n    def __init__(self, name: str) -> None:\n        self.name = name\n'
    ),
    "app/api.py": "from app.models import User\n\n\ndef get_user(name: str) -> User:\n    return User(name)\n",
    "app/services.py": (
        "from app import models\n\n\ndef rename(user: models.User, name: str) -> None:\n    user.name = name\n"
    ),
    "tests/test_api.py": (
        "from app.api import get_user\n\n\ndef test_get_user():\n    assert get_user('a').name == 'a'\n"
    ),
    "README.md": "# sample\n",
}


def sample_repo(path: Path, commits: int = 3) -> list[str]:
    """A small Python project with a few commits of history; returns shas, oldest first."""
    init_repo(path)
    shas = [commit(path, SAMPLE, "initial layout", at=T0)]
    for i in range(1, commits):
        shas.append(
            commit(
                path,
                {
                    "app/api.py": SAMPLE["app/api.py"] + f"\n\ndef v{i}() -> int:\n    return {i}\n",
                    "app/models.py": SAMPLE["app/models.py"] + f"\n# rev {i}\n",
                },
                f"fix api bug {i}",
                at=T0 + i * 3600,
                who="bob" if i % 2 else "alice",
            )
        )
    return shas


def principal(user_id: str, *memberships: tuple[str, str]) -> common_pb2.Principal:
    return common_pb2.Principal(
        user_id=user_id,
        login=user_id,
        memberships=[common_pb2.Membership(org_id=o, org_name=o, role=r) for o, r in memberships],
    )


@contextlib.contextmanager
def acting_as(who: common_pb2.Principal | None) -> Iterator[None]:
    token = principal_var.set(who)
    try:
        yield
    finally:
        principal_var.reset(token)


@dataclass
class FakeMsg:
    """Records how the worker settles a JetStream message."""

    settled: list[str] = field(default_factory=list)
    beats: int = 0

    async def ack_sync(self) -> None:
        self.settled.append("ack")

    async def nak(self, delay: float | None = None) -> None:
        self.settled.append("nak")

    async def term(self) -> None:
        self.settled.append("term")

    async def in_progress(self) -> None:
        self.beats += 1


def make_settings(tmp: Path, db: Database, **overrides: object) -> IndexerSettings:
    values: dict[str, object] = {
        "database_url": db.url,
        "data_dir": str(tmp / "data"),
        "allowed_roots": str(tmp / "repos"),
        "history_depth": 500,
        "heartbeat_seconds": 0.2,
        "lease_seconds": 5.0,
    }
    values.update(overrides)
    return IndexerSettings(**values)  # type: ignore[arg-type]


async def run_job(worker: IndexWorker, run_id: str, msg: FakeMsg | None = None) -> str:
    return await worker.process(msg or FakeMsg(), events_pb2.IndexJob(run_id=run_id))  # type: ignore[arg-type]


async def run_row(db: Database, run_id: str) -> IndexRun:
    async with db.session() as session:
        return (await session.execute(select(IndexRun).where(IndexRun.id == run_id))).scalar_one()
