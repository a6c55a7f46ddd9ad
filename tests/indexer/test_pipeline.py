"""Index runs end to end inside one process: the worker claims a run, the pipeline builds the
snapshot with the extraction pool, and the read RPCs serve it. Bad repository content and
failures must end in a settled state, never a stuck one."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import resource
import subprocess
import zlib
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select, update

from services.contracts.v1 import common_pb2, indexer_pb2
from services.indexer.extraction import ExtractorPool
from services.indexer.facts_codec import decode_facts
from services.indexer.models import BlobFacts, IndexRun, Snapshot, SnapshotFile, now_ms
from services.indexer.pipeline import Progress
from services.indexer.servicer import IndexerServicer
from services.indexer.sources import HostApp
from services.indexer.worker import IndexWorker
from services.kit.bus import Bus
from services.kit.errors import ServiceError
from tests.indexer.support import (
    FakeMsg,
    acting_as,
    commit,
    git,
    init_repo,
    make_settings,
    principal,
    run_job,
    run_row,
    sample_repo,
    write,
)

ALICE = principal("a" * 32)
Req = indexer_pb2


@pytest.fixture(scope="module")
def pool() -> ExtractorPool:
    pool = ExtractorPool(2)
    pool.warm_up()
    yield pool  # type: ignore[misc]
    pool.shutdown()


class Env:
    def __init__(self, db, settings, pool: ExtractorPool, root: Path) -> None:  # type: ignore[no-untyped-def]
        self.db = db
        self.settings = settings
        self.root = root
        self.api = IndexerServicer(db, settings, HostApp(settings))
        self.worker = IndexWorker(settings, db, Bus("nats://127.0.0.1:1", "UNUSED"), pool, HostApp(settings))

    async def register(self, name: str, **fields: object) -> indexer_pb2.Repository:
        with acting_as(ALICE):
            return await self.api.CreateRepository(
                Req.CreateRepositoryRequest(path=str(self.root / name), **fields), None
            )  # type: ignore[arg-type]

    async def trigger(self, repo_id: str, incremental: bool = False) -> indexer_pb2.IndexStatus:
        with acting_as(ALICE):
            return await self.api.StartIndex(Req.StartIndexRequest(repo=repo_id, incremental=incremental), None)  # type: ignore[arg-type]

    async def index(
        self, repo_id: str, incremental: bool = False, msg: FakeMsg | None = None
    ) -> indexer_pb2.IndexStatus:
        status = await self.trigger(repo_id, incremental)
        await run_job(self.worker, status.run_id, msg)
        return await self.status(repo_id)

    async def status(self, repo_id: str) -> indexer_pb2.IndexStatus:
        with acting_as(ALICE):
            return await self.api.GetIndexStatus(Req.GetRepositoryRequest(repo=repo_id), None)  # type: ignore[arg-type]

    async def read(self, method: str, repo_id: str, **fields: object) -> Any:
        with acting_as(ALICE):
            return await getattr(self.api, method)(Req.ReadRequest(repo=repo_id, **fields), None)

    async def file(self, repo_id: str, path: str, commit_sha: str = "") -> indexer_pb2.FileContent:
        with acting_as(ALICE):
            return await self.api.GetFile(Req.GetFileRequest(repo=repo_id, path=path, commit=commit_sha), None)  # type: ignore[arg-type]

    async def files(self, repo_id: str, paths: list[str]) -> list[indexer_pb2.FilesChunk]:
        with acting_as(ALICE):
            request = Req.StreamFilesRequest(repo=repo_id, paths=paths)
            return [c async for c in self.api.StreamFiles(request, None)]  # type: ignore[arg-type]


@pytest.fixture
async def env(make_db, tmp_path: Path, pool: ExtractorPool) -> Env:  # type: ignore[no-untyped-def]
    db = make_db("indexer")
    (tmp_path / "repos").mkdir()
    return Env(db, make_settings(tmp_path, db), pool, tmp_path / "repos")


async def refused(coro: object, code: str) -> ServiceError:
    with pytest.raises(ServiceError) as info:
        await coro  # type: ignore[misc]
    assert info.value.code == code, info.value
    return info.value


async def test_full_index_then_reads(env: Env) -> None:
    shas = sample_repo(env.root / "proj", commits=3)
    repo = await env.register("proj")
    await refused(env.read("GetDomains", repo.id), "repo_not_indexed")
    msg = FakeMsg()
    status = await env.index(repo.id, msg=msg)
    assert msg.settled == ["ack"]
    assert status.state == "ready", status.error
    assert status.head_sha == shas[-1]
    assert status.files_total == status.files_done == 6
    assert status.files_parsed == 6
    assert status.attempts == 1
    assert {"fetch", "tree", "extract", "structure", "history", "write", "total"} <= set(status.timings)

    domains = await env.read("GetDomains", repo.id)
    assert domains.commit == shas[-1]
    assert {d.name for d in domains.domains} >= {"app"}
    segments = await env.read("GetSegments", repo.id)
    assert segments.segments
    assert segments.page.total == len(segments.segments)
    network = await env.read("GetNetwork", repo.id)
    assert indexer_pb2.NetworkEdge(source="app/api.py", target="app/models.py", weight=1) in network.edges
    assert network.counts.nodes == len(network.nodes)
    history = await env.read("GetHistory", repo.id)
    assert history.commits == 3
    assert history.WhichOneof("view") == "repository"
    by_path = {f.path: f for f in history.repository.files}
    assert by_path["app/api.py"].commits == 3
    assert by_path["app/api.py"].authors == 2
    assert by_path["app/api.py"].fix_commits == 2
    assert by_path["app/api.py"].last_timestamp.seconds >= by_path["app/api.py"].first_timestamp.seconds > 0
    one = await env.read("GetHistory", repo.id, path="app/api.py")
    assert one.WhichOneof("view") == "single_file"
    assert one.single_file.file.commits == 3
    assert {c.target for c in one.single_file.cochanges} == {"app/models.py"}
    await refused(env.read("GetHistory", repo.id, path="nope.py"), "file_not_found")
    await refused(env.read("GetHistory", repo.id, path="../etc/passwd"), "validation_failed")
    page = await env.read("GetHistory", repo.id, page=common_pb2.PageRequest(limit=2))
    assert len(page.repository.files) == 2
    assert page.repository.page.next_cursor

    content = await env.file(repo.id, "app/api.py")
    assert content.content.startswith(b"from app.models import User")
    facts = decode_facts(content.facts)
    assert facts.language == "python"
    assert facts.path == "app/api.py"
    with acting_as(ALICE):
        chunks = [c async for c in env.api.StreamFacts(Req.StreamFactsRequest(repo=repo.id), None)]  # type: ignore[arg-type]
        cochanges = await env.api.GetCoChanges(Req.GetRepositoryRequest(repo=repo.id), None)  # type: ignore[arg-type]
    streamed = {f.path: decode_facts(f.facts) for c in chunks for f in c.files}
    assert set(streamed) == set(by_path) | {"README.md", "app/__init__.py", "tests/test_api.py"}
    assert streamed["app/models.py"].symbols
    assert cochanges.commits_per_file["app/api.py"] == 3
    with acting_as(None):  # an internal caller (the analyzer learning on an event, hostapp's gate)
        internal = await env.api.GetFile(Req.GetFileRequest(repo=repo.id, path="app/api.py"), None)  # type: ignore[arg-type]
        gate = await env.api.GetIndexStatus(Req.GetRepositoryRequest(repo=repo.id), None)  # type: ignore[arg-type]
        with pytest.raises(ServiceError):  # but no changes without a caller
            await env.api.DeleteRepository(Req.GetRepositoryRequest(repo=repo.id), None)  # type: ignore[arg-type]
    assert internal.blob_sha == content.blob_sha
    assert gate.state == "ready"


async def test_incremental_index_reads_only_changed_files(env: Env) -> None:
    sample_repo(env.root / "proj", commits=2)
    repo = await env.register("proj")
    first = await env.index(repo.id)
    assert first.files_parsed == 6
    head = commit(env.root / "proj", {"app/services.py": "def changed() -> None:\n    pass\n"}, "change one file")
    second = await env.index(repo.id, incremental=True)
    assert second.state == "ready"
    assert second.head_sha == head
    assert second.incremental
    assert second.files_parsed == 1
    assert second.files_total == 6
    content = await env.file(repo.id, "app/services.py")
    assert b"def changed" in content.content
    unchanged = await env.index(repo.id, incremental=True)
    assert unchanged.files_parsed == 0
    full = await env.index(repo.id)
    assert full.files_parsed == 6
    async with env.db.session() as session:  # only the current snapshot and its blobs remain
        assert (await session.execute(select(func.count()).select_from(Snapshot))).scalar_one() == 1
        facts = (await session.execute(select(func.count()).select_from(BlobFacts))).scalar_one()
    assert facts == 6


async def test_hostile_and_unusual_content_is_recorded_as_skipped(env: Env, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    root = init_repo(env.root / "odd")
    write(
        root,
        {
            "ok.py": "x = 1\n",
            "image.bin": bytes(range(256)) * 64,
            "latin1.py": "name = 'caf\xe9'\n".encode("latin-1"),
            "big.py": b"x = 1\n" * (50 * 1024 * 1024 // 6),
        },
    )
    (root / "escape").symlink_to(secret)
    (root / "dir-escape").symlink_to(tmp_path)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "odd files")
    repo = await env.register("odd")
    status = await env.index(repo.id)
    assert status.state == "ready", status.error
    assert status.files_total == 6
    expected = {
        "image.bin": "binary",
        "latin1.py": "invalid_encoding",
        "big.py": "oversized",
        "escape": "symlink",
        "dir-escape": "symlink",
    }
    async with env.db.session() as session:
        rows = dict((await session.execute(select(SnapshotFile.path, SnapshotFile.skipped))).all())
    assert rows == {**expected, "ok.py": ""}
    for path, reason in expected.items():
        error = await refused(env.file(repo.id, path), "unsupported_file_type")
        assert error.details["reason"] == reason
    assert (await env.file(repo.id, "ok.py")).content == b"x = 1\n"
    with acting_as(ALICE):
        chunks = [c async for c in env.api.StreamFacts(Req.StreamFactsRequest(repo=repo.id), None)]  # type: ignore[arg-type]
    streamed = {f.path: decode_facts(f.facts) for c in chunks for f in c.files}
    assert streamed["big.py"].skipped == "oversized"
    assert streamed["escape"].skipped == "symlink"
    assert all(b"TOP SECRET" not in f.facts for c in chunks for f in c.files)


# Past int32 and git's core.bigFileThreshold (512 MiB): the shape of the 1 GiB blob of issue #22
# that ended ready, twice over.
HUGE_BLOB = 2**31 + 2**24


def zero_blob(repo: Path, size: int) -> str:
    """A blob of ``size`` zero bytes written straight into the repository's object store, at zlib
    level 1 (``git add`` of a file that size compresses it at git's default level: many seconds more)."""
    header = b"blob %d\0" % size
    digest, packer = hashlib.sha1(header), zlib.compressobj(1)
    parts, chunk, left = [packer.compress(header)], bytes(1 << 24), size
    while left:
        part = chunk[: min(left, len(chunk))]
        digest.update(part)
        parts.append(packer.compress(part))
        left -= len(part)
    parts.append(packer.flush())
    sha = digest.hexdigest()
    (repo / ".git" / "objects" / sha[:2]).mkdir(parents=True, exist_ok=True)
    (repo / ".git" / "objects" / sha[:2] / sha[2:]).write_bytes(b"".join(parts))
    return sha


async def test_a_blob_past_2_gib_is_skipped_by_its_tree_size_and_never_read(env: Env) -> None:
    root = init_repo(env.root / "huge")
    commit(root, {"app.py": "x = 1\n"}, "code")
    git(root, "update-index", "--add", "--cacheinfo", f"100644,{zero_blob(root, HUGE_BLOB)},data/huge.bin")
    git(root, "commit", "-q", "-m", "a 2 GiB blob")
    with_blob = git(root, "rev-parse", "HEAD")
    git(root, "commit", "-q", "--allow-empty", "-m", "later")  # the blob is also asked for at an older commit
    git(root, "config", "pack.compression", "1")  # the clone's pack-objects recompresses at level 1 too
    # The mirror holds it in ~10 MB (zeros compress): the repository bound lets it in, the file bound
    # must keep it out of memory. A read of it would lift this process's peak by 2 GiB.
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    repo = await env.register("huge")
    status = await env.index(repo.id)
    assert status.state == "ready", status.error
    async with env.db.session() as session:
        rows = {r.path: r for r in (await session.execute(select(SnapshotFile))).scalars()}
    assert (rows["data/huge.bin"].skipped, rows["data/huge.bin"].size) == ("oversized", HUGE_BLOB)
    assert rows["app.py"].skipped == ""
    for at in ("", with_blob):  # the snapshot's row; ls-tree's size at another commit
        error = await refused(env.file(repo.id, "data/huge.bin", at), "unsupported_file_type")
        assert error.details["reason"] == "oversized"
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) * 1024
    assert grown < 2**30, f"peak memory grew by {grown} bytes"


async def test_a_repository_past_the_size_bound_fails_with_its_reason(
    make_db, tmp_path: Path, pool: ExtractorPool
) -> None:  # type: ignore[no-untyped-def]
    db = make_db("indexer")
    (tmp_path / "repos").mkdir()
    env = Env(db, make_settings(tmp_path, db, max_repository_bytes=256 * 1024), pool, tmp_path / "repos")
    # Random bytes do not compress: the clone outgrows the bound and is stopped, never left half-indexed.
    commit(init_repo(env.root / "big"), {"app.py": "x = 1\n", "blob.bin": os.urandom(1024 * 1024)}, "big")
    repo = await env.register("big")
    status = await env.index(repo.id)
    assert (status.state, status.error_code) == ("failed", "repository_too_large"), status.error
    assert "limit 262144" in status.error


async def test_tool_configuration_files_are_served_though_no_facts_are_extracted(env: Env) -> None:
    root = init_repo(env.root / "configured")
    editorconfig = "root = true\n\n[*.py]\nindent_style = space\nindent_size = 4\nmax_line_length = 100\n"
    first = commit(
        root,
        {"app/core.py": "x = 1\n", ".editorconfig": editorconfig, "setup.cfg": "[flake8]\nmax-line-length = 100\n"},
        "configured",
    )
    commit(root, {"NOTES.xyz": "free text\n"}, "notes")
    repo = await env.register("configured")
    status = await env.index(repo.id)
    assert status.state == "ready", status.error
    async with env.db.session() as session:
        rows = dict((await session.execute(select(SnapshotFile.path, SnapshotFile.skipped))).all())
    assert rows[".editorconfig"] == rows["setup.cfg"] == rows["NOTES.xyz"] == "unsupported_language"

    assert (await env.file(repo.id, ".editorconfig")).content.decode() == editorconfig
    assert b"max-line-length = 100" in (await env.file(repo.id, "setup.cfg", first)).content  # at another commit too
    error = await refused(env.file(repo.id, "NOTES.xyz"), "unsupported_file_type")
    assert error.details["reason"] == "unsupported_language"


async def test_many_files_stream_as_get_file_answers_each(env: Env) -> None:
    # A pull request's bases come in one call: each file as GetFile serves it, in chunks.
    root = init_repo(env.root / "many")
    many = {f"pkg/m{i:03}.py": f"value_{i} = {i}\n" for i in range(450)}
    commit(root, {**many, "image.bin": bytes(range(256)) * 64, "setup.cfg": "[flake8]\nmax-line-length = 99\n"}, "many")
    repo = await env.register("many")
    assert (await env.index(repo.id)).state == "ready"
    asked = ["setup.cfg", "gone.py", *sorted(many), "image.bin", "pkg/m001.py"]
    chunks = await env.files(repo.id, asked)
    assert len(chunks) == 3  # at most CHUNK_FILES files each
    served = [f for c in chunks for f in c.files]
    assert [f.path for f in served] == ["setup.cfg", *sorted(many), "image.bin"]  # asked order, once, none missing
    by_path = {f.path: f for f in served}
    for path in ("setup.cfg", "pkg/m000.py", "pkg/m449.py"):
        one = await env.file(repo.id, path)
        assert (by_path[path].content, by_path[path].facts, by_path[path].blob_sha) == (
            one.content,
            one.facts,
            one.blob_sha,
        )
    assert by_path["image.bin"].skipped == "binary"
    assert not by_path["image.bin"].content
    assert {c.commit for c in chunks} == {(await env.status(repo.id)).head_sha}
    await refused(env.files(repo.id, ["ok.py", "../etc/passwd"]), "validation_failed")
    await refused(env.files(repo.id, ["x.py"] * 10_001), "validation_failed")


async def test_empty_repository_fails_cleanly(env: Env) -> None:
    init_repo(env.root / "empty")
    repo = await env.register("empty")
    msg = FakeMsg()
    status = await env.index(repo.id, msg=msg)
    assert msg.settled == ["ack"]
    assert status.state == "failed"
    assert "no commits" in status.error
    assert status.head_sha == ""
    commit(env.root / "empty", {"a.py": "a = 1\n"}, "first")
    assert (await env.index(repo.id)).state == "ready"


async def test_repository_deleted_during_its_index_is_cancelled(env: Env) -> None:
    root = init_repo(env.root / "big")
    write(
        root,
        {
            f"pkg{i % 20}/mod{i}.py": f"import os\n\n\ndef f{i}(x: int) -> int:\n    return x + {i}\n" * 20
            for i in range(1500)
        },
    )
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "many files")
    other_root = env.root / "other"
    sample_repo(other_root, commits=1)
    big = await env.register("big")
    other = await env.register("other")
    assert (await env.index(other.id)).state == "ready"
    status = await env.trigger(big.id)
    msg = FakeMsg()
    job = asyncio.create_task(run_job(env.worker, status.run_id, msg))
    for _ in range(400):
        if (await run_row(env.db, status.run_id)).state == "indexing":
            break
        await asyncio.sleep(0.01)
    with acting_as(ALICE):
        await env.api.DeleteRepository(Req.GetRepositoryRequest(repo=big.id), None)  # type: ignore[arg-type]
    assert await asyncio.wait_for(job, 60) == "cancelled"
    assert msg.settled == ["ack"]
    await refused(env.status(big.id), "repo_not_found")
    async with env.db.session() as session:
        for model in (IndexRun, Snapshot, BlobFacts):
            left = (
                await session.execute(select(func.count()).select_from(model).where(model.repository_id == big.id))
            ).scalar_one()
            assert left == 0, model
    assert not (env.settings.mirrors_dir() / f"{big.id}.git").exists()
    assert (await env.status(other.id)).state == "ready"  # the other repository is untouched
    assert (await env.file(other.id, "app/api.py")).content


async def test_crashed_worker_run_is_taken_over_by_redelivery(env: Env) -> None:
    sample_repo(env.root / "proj", commits=1)
    repo = await env.register("proj")
    status = await env.trigger(repo.id)
    async with env.db.session() as session:  # another worker claimed it, then died
        await session.execute(
            update(IndexRun)
            .where(IndexRun.id == status.run_id)
            .values(state="indexing", attempts=1, worker="dead:1", lease_expires_at=now_ms() + 60_000)
        )
    msg = FakeMsg()
    assert await run_job(env.worker, status.run_id, msg) == "busy"  # its lease is still live
    assert msg.settled == ["nak"]  # back when the lease runs out, not left to the reaper
    async with env.db.session() as session:
        await session.execute(
            update(IndexRun).where(IndexRun.id == status.run_id).values(lease_expires_at=now_ms() - 1)
        )
    assert await run_job(env.worker, status.run_id, msg) == "ready"
    final = await env.status(repo.id)
    assert final.attempts == 2
    assert msg.settled == ["nak", "ack"]
    assert await run_job(env.worker, status.run_id, msg) == "gone"  # a late duplicate is a no-op


async def test_run_this_worker_abandoned_is_taken_again_at_once(env: Env) -> None:
    # PostgreSQL restarted mid-run: the worker could not record the outcome and its message
    # came back while its own lease still runs. One job at a time per worker: it is not running.
    sample_repo(env.root / "proj", commits=1)
    repo = await env.register("proj")
    status = await env.trigger(repo.id)
    async with env.db.session() as session:
        await session.execute(
            update(IndexRun)
            .where(IndexRun.id == status.run_id)
            .values(state="indexing", attempts=1, worker=env.worker.name, lease_expires_at=now_ms() + 60_000)
        )
    msg = FakeMsg()
    assert await run_job(env.worker, status.run_id, msg) == "ready"
    assert msg.settled == ["ack"]
    assert (await env.status(repo.id)).attempts == 2


async def test_transient_failures_retry_then_fail(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    from services.indexer import worker as worker_module

    sample_repo(env.root / "proj", commits=1)
    repo = await env.register("proj")

    def boom(*args: object, **kw: object) -> None:
        raise RuntimeError("database went away")

    monkeypatch.setattr(worker_module, "build_snapshot", boom)
    status = await env.trigger(repo.id)
    msg = FakeMsg()
    for _ in range(env.settings.max_attempts):
        await run_job(env.worker, status.run_id, msg)
    assert msg.settled == ["nak"] * (env.settings.max_attempts - 1) + ["ack"]
    final = await env.status(repo.id)
    assert final.state == "failed"
    assert "database went away" in final.error
    # Reads say why there is nothing to read: the spec's index_failed, not repo_not_indexed.
    error = await refused(env.read("GetDomains", repo.id), "index_failed")
    assert error.details["state"] == "failed"
    assert "database went away" in error.details["error"]


async def test_changes_between_commits_and_staged(env: Env) -> None:
    shas = sample_repo(env.root / "proj", commits=2)
    repo = await env.register("proj")
    await env.index(repo.id)
    with acting_as(ALICE):
        changes = await env.api.GetChanges(Req.GetChangesRequest(repo=repo.id, base=shas[0], head=shas[1]), None)  # type: ignore[arg-type]
    by_path = {f.path: f for f in changes.files}
    assert set(by_path) == {"app/api.py", "app/models.py"}
    assert by_path["app/api.py"].status == "modified"
    assert by_path["app/api.py"].added_lines
    assert b"def v1" in by_path["app/api.py"].content
    base_api = git(env.root / "proj", "show", f"{shas[0]}:app/api.py")
    assert by_path["app/api.py"].base_content.decode().strip() == base_api  # the base side, for the baseline
    write(env.root / "proj", {"app/new.py": "def new() -> None:\n    pass\n"})
    git(env.root / "proj", "add", "app/new.py")
    with acting_as(ALICE):
        staged = await env.api.GetChanges(Req.GetChangesRequest(repo=repo.id, staged=True), None)  # type: ignore[arg-type]
        await refused(env.api.GetChanges(Req.GetChangesRequest(repo=repo.id), None), "validation_failed")  # type: ignore[arg-type]
        await refused(
            env.api.GetChanges(Req.GetChangesRequest(repo=repo.id, base="--output=/tmp/x", head="HEAD"), None),  # type: ignore[arg-type]
            "validation_failed",
        )
        # Commits the repository does not have: which one, not git's usage text.
        for base, head, field in (("deadbeef", shas[1], "base"), (shas[0], "cafebabe", "head")):
            unknown = await refused(
                env.api.GetChanges(Req.GetChangesRequest(repo=repo.id, base=base, head=head), None),  # type: ignore[arg-type]
                "validation_failed",
            )
            assert unknown.details == {"field": field, "reason": "unknown_commit"}
            assert (
                unknown.message == f"{field} {(base if field == 'base' else head)!r} is not a commit of this repository"
            )
    assert [(f.path, f.status) for f in staged.files] == [("app/new.py", "added")]
    assert staged.files[0].content.startswith(b"def new")
    old = await env.file(repo.id, "app/api.py", commit_sha=shas[0])
    assert b"def v1" not in old.content
    assert decode_facts(old.facts).language == "python"
    await refused(env.file(repo.id, "app/nope.py", commit_sha=shas[0]), "file_not_found")


async def test_history_cache_follows_new_commits_and_history_rewrites(env: Env) -> None:
    root = env.root / "proj"
    shas = sample_repo(root, commits=3)
    repo = await env.register("proj")
    await env.index(repo.id)
    cache = env.settings.mirrors_dir() / f"{repo.id}.history"
    assert cache.exists()
    for i in range(2):
        commit(root, {"app/api.py": f"VALUE = {i}\n", "app/extra.py": f"X = {i}\n"}, f"more {i}", at=1_800_000_000 + i)
    await env.index(repo.id, incremental=True)
    cached = await env.read("GetHistory", repo.id)
    assert cached.commits == 5
    cache.unlink()
    await env.index(repo.id, incremental=True)
    assert await env.read("GetHistory", repo.id) == cached  # the same as reading the whole log
    git(root, "reset", "-q", "--hard", shas[0])  # history rewritten: the cache cannot be extended
    commit(root, {"app/other.py": "Y = 1\n"}, "rewritten", at=1_900_000_000)
    await env.index(repo.id, incremental=True)
    rewritten = await env.read("GetHistory", repo.id)
    assert rewritten.commits == 2
    assert {f.path for f in rewritten.repository.files} >= {"app/other.py", "app/api.py"}


async def test_a_run_over_its_time_budget_fails_with_timeout(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    from services.indexer import extraction

    sample_repo(env.root / "proj", commits=1)
    repo = await env.register("proj")
    env.worker.settings = env.settings.model_copy(update={"run_timeout_seconds": 0.5})
    monkeypatch.setattr(extraction, "run_task", _hang)  # a file that hangs the parser
    msg = FakeMsg()
    status = await env.index(repo.id, msg=msg)
    assert msg.settled == ["ack"]
    assert status.state == "failed"
    assert status.error_code == "timeout"
    monkeypatch.undo()
    env.worker.settings = env.settings
    assert (await env.index(repo.id)).state == "ready"  # the hung worker was killed, the pool replaced


def _hang(task: object) -> None:
    import time

    time.sleep(3600)


async def test_unreachable_url_fails_after_bounded_retries(env: Env) -> None:
    settings = env.settings.model_copy(update={"allowed_clone_origins": "127.0.0.1:9", "clone_timeout_seconds": 20.0})
    env.api.settings = env.worker.settings = settings
    with acting_as(ALICE):  # a closed port: git cannot connect
        repo = await env.api.CreateRepository(Req.CreateRepositoryRequest(url="https://127.0.0.1:9/none.git"), None)  # type: ignore[arg-type]
    status = await env.trigger(repo.id)
    msg = FakeMsg()
    for _ in range(settings.max_attempts):
        await run_job(env.worker, status.run_id, msg)
    final = await env.status(repo.id)
    assert final.state == "failed"
    assert final.error_code == "git_failed"
    assert final.attempts == settings.max_attempts
    assert msg.settled[-1] == "ack"


def _loose(repo: Path, kind: str, body: bytes) -> str:
    """Write one object straight into the object database: git's own commands cannot build a
    tree thousands deep through a file system whose paths end at 4,096 bytes."""
    raw = f"{kind} {len(body)}\0".encode() + body
    sha = hashlib.sha1(raw).hexdigest()
    target = repo / ".git" / "objects" / sha[:2] / sha[2:]
    target.parent.mkdir(exist_ok=True)
    if not target.exists():
        target.write_bytes(zlib.compress(raw, 1))
    return sha


async def test_paths_no_api_can_address_are_left_out_and_said_in_the_notes(env: Env) -> None:
    root = init_repo(env.root / "deep")
    commit(root, {"ok.py": "x = 1\n", "win\\style.py": "y = 2\n"}, "files")
    # A tree 2,500 deep (the bound is the path's length, whatever the depth): its one file's path
    # is 5,006 characters, past what any route takes.
    tree = _loose(root, "tree", b"100644 x.py\0" + bytes.fromhex(_loose(root, "blob", b"z = 3\n")))
    for _ in range(2_500):
        tree = _loose(root, "tree", b"40000 d\0" + bytes.fromhex(tree))
    top = git(root, "rev-parse", "HEAD^{tree}")
    listing = git(root, "ls-tree", top) + f"\n040000 tree {tree}\td\n"
    new_top = (
        subprocess.run(["git", "mktree"], cwd=root, input=listing.encode(), check=True, capture_output=True)
        .stdout.decode()
        .strip()
    )
    head = git(root, "commit-tree", new_top, "-p", "HEAD", "-m", "deep")
    git(root, "update-ref", "refs/heads/main", head)

    repo = await env.register("deep")
    status = await env.index(repo.id)

    assert status.state == "ready", status.error
    assert status.files_total == 1
    assert [n.split(":")[0] for n in status.notes] == [
        "left out 1 file(s) no API can address (path contains a backslash; use '/')",
        "left out 1 file(s) no API can address (path longer than 4096 characters)",
    ]
    assert "(5006 characters)" in status.notes[1]
    async with env.db.session() as session:
        stored = (await session.execute(select(SnapshotFile.path))).scalars().all()
        longest = (await session.execute(select(func.max(func.length(SnapshotFile.path))))).scalar()
    assert stored == ["ok.py"]
    assert longest == len("ok.py")
    history = await env.read("GetHistory", repo.id)
    assert all(len(s.path) < 4096 for s in history.repository.hot_spots)


async def test_a_running_index_publishes_its_progress_every_second(  # type: ignore[no-untyped-def]
    make_db, tmp_path: Path, pool: ExtractorPool
) -> None:
    """What `repo index` and MCP show while a run works: files done of total and the phase, within
    a second, not once per lease renewal (4 s, after which a small repository is already done)."""
    db = make_db("indexer")
    (tmp_path / "repos").mkdir()
    env = Env(db, make_settings(tmp_path, db, heartbeat_seconds=4.0, lease_seconds=20.0), pool, tmp_path / "repos")
    sample_repo(env.root / "proj", commits=1)
    repo = await env.register("proj")
    status = await env.trigger(repo.id)
    async with env.db.session() as session:  # claimed by this worker, its pipeline under way
        await session.execute(
            update(IndexRun)
            .where(IndexRun.id == status.run_id)
            .values(state="indexing", attempts=1, worker=env.worker.name, lease_expires_at=now_ms() + 20_000)
        )
    progress = Progress(total=40, done=7, phase="extracting")
    beat = asyncio.create_task(env.worker._heartbeat(status.run_id, progress))
    try:
        deadline = asyncio.get_running_loop().time() + 2.5
        shown = await env.status(repo.id)
        while (shown.files_done, shown.files_total) != (7, 40):
            assert asyncio.get_running_loop().time() < deadline, f"no progress published: {shown}"
            await asyncio.sleep(0.05)
            shown = await env.status(repo.id)
        assert (shown.state, shown.phase) == ("indexing", "extracting")
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
