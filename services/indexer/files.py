"""What the analyzer reads: the snapshot's facts (streamed), one file's content and facts, and
the changes between two commits or staged in a local repository's worktree.

Contents always come from the mirror's object database by blob id, never from a work tree,
so no path a caller sends can reach outside the repository.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from services.contracts.v1 import indexer_pb2
from services.indexer import access, queries, sources
from services.indexer.facts_codec import apply_resolution, decode_facts, encode_facts, skipped_facts
from services.indexer.git import (
    ChangedFile,
    GitError,
    GitInputError,
    changed_files,
    ensure_mirror,
    resolve_ref,
    run_git,
    staged_changes,
    validate_rev,
)
from services.indexer.git.readers import READERS
from services.indexer.models import Repository, SnapshotFile
from services.indexer.reads import checked_path, indexed
from services.indexer.settings import IndexerSettings
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.source.paths import is_tool_config

CHUNK_FILES = 200
CHUNK_BYTES = 4 * 1024 * 1024
_LS_TREE_MAX = 64 * 1024
# Blobs up to this size are read on the event loop when a reader is ready (no git to start):
# a thread hop would cost more than the read.
_INLINE_READ_BYTES = 256 * 1024
MAX_STREAMED_PATHS = 10_000


def _facts_bytes(row: SnapshotFile, facts: bytes | None) -> bytes:
    if facts is None:
        return encode_facts(skipped_facts(row.path, row.language, row.size, row.blob_sha, row.skipped or "unknown"))
    if row.resolved:
        return encode_facts(apply_resolution(decode_facts(facts), row.resolved))
    return facts


def _same_commit(repo: Repository, commit: str) -> bool:
    return not commit or commit == repo.head_sha


async def stream_facts(db: Database, request: indexer_pb2.StreamFactsRequest) -> AsyncIterator[indexer_pb2.FactsChunk]:
    async with db.snapshot_session() as session:  # the snapshot named and its rows, as one
        repo, snapshot_id = await indexed(session, request.repo)
        if not _same_commit(repo, request.commit):
            raise ServiceError(
                "repo_not_indexed", "that commit is not the indexed snapshot", {"commit": request.commit}
            )
        chunk = indexer_pb2.FactsChunk(commit=repo.head_sha)
        size = 0
        async for row, facts in queries.stream_snapshot_facts(session, repo.id, snapshot_id):
            data = _facts_bytes(row, facts)
            chunk.files.add(path=row.path, blob_sha=row.blob_sha, language=row.language, facts=data)
            size += len(data)
            if len(chunk.files) >= CHUNK_FILES or size >= CHUNK_BYTES:
                yield chunk
                chunk = indexer_pb2.FactsChunk(commit=repo.head_sha)
                size = 0
        if chunk.files:
            yield chunk


def _served_anyway(path: str, skipped: str) -> bool:
    """A tool's configuration file (``.editorconfig``, ``setup.cfg``) is read by the analyzer
    for its declared conventions, though it is in no language we extract facts from."""
    return skipped == "unsupported_language" and is_tool_config(path)


def _unsupported(path: str, reason: str) -> ServiceError:
    return ServiceError(
        "unsupported_file_type", f"{path} is not analyzable ({reason})", {"path": path, "reason": reason}
    )


def _read_blob(mirror: str, sha: str, max_bytes: int) -> bytes | None:
    with READERS.borrow(mirror, max_bytes) as reader:
        blob = reader.read(sha)
    return None if blob is None else blob.data


async def get_file(
    db: Database, settings: IndexerSettings, request: indexer_pb2.GetFileRequest
) -> indexer_pb2.FileContent:
    path = checked_path(request.path)
    async with db.read_session() as session:  # on every analysis of an indexed path
        repo, snapshot_id = await indexed(session, request.repo)
        found = (
            await queries.snapshot_file(session, repo.id, snapshot_id, path)
            if _same_commit(repo, request.commit)
            else None
        )
    mirror = str(sources.mirror_path(settings, repo.id))
    if _same_commit(repo, request.commit):
        if found is None:
            raise ServiceError("file_not_found", "the path is not in the indexed snapshot", {"path": path})
        row, facts = found
        if row.skipped and not _served_anyway(path, row.skipped):
            raise _unsupported(path, row.skipped)
        if row.size <= _INLINE_READ_BYTES and READERS.has_idle(mirror):  # answered in well under a ms
            content = _read_blob(mirror, row.blob_sha, settings.max_file_bytes)
        else:
            content = await asyncio.to_thread(_read_blob, mirror, row.blob_sha, settings.max_file_bytes)
        if content is None:
            raise ServiceError("file_not_found", "the file's content is no longer available", {"path": path})
        return indexer_pb2.FileContent(
            path=path, blob_sha=row.blob_sha, content=content, facts=_facts_bytes(row, facts), commit=repo.head_sha
        )
    return await asyncio.to_thread(_file_at, mirror, request.commit, path, settings.max_file_bytes)


async def stream_files(
    db: Database, settings: IndexerSettings, request: indexer_pb2.StreamFilesRequest
) -> AsyncIterator[indexer_pb2.FilesChunk]:
    """``GetFile`` for many paths of the indexed snapshot: one read of the rows, then the blobs in
    chunks (at most CHUNK_FILES files or about CHUNK_BYTES each), each read on one borrowed reader."""
    if len(request.paths) > MAX_STREAMED_PATHS:
        raise ServiceError("validation_failed", f"at most {MAX_STREAMED_PATHS} paths per call", {"field": "paths"})
    paths = list(dict.fromkeys(checked_path(p) for p in request.paths))
    async with db.snapshot_session() as session:  # the snapshot named and its rows, as one
        repo, snapshot_id = await indexed(session, request.repo)
        rows = await queries.snapshot_files(session, repo.id, snapshot_id, paths) if paths else {}
    mirror = str(sources.mirror_path(settings, repo.id))
    group: list[SnapshotFile] = []
    size = 0
    chunk = indexer_pb2.FilesChunk(commit=repo.head_sha)
    for path in paths:
        found = rows.get(path)
        if found is None:
            continue
        row, facts = found
        if row.skipped and not _served_anyway(path, row.skipped):
            chunk.files.add(path=path, blob_sha=row.blob_sha, skipped=row.skipped, commit=repo.head_sha)
            continue
        group.append(row)
        chunk.files.add(path=path, blob_sha=row.blob_sha, facts=_facts_bytes(row, facts), commit=repo.head_sha)
        size += row.size
        if len(chunk.files) >= CHUNK_FILES or size >= CHUNK_BYTES:
            yield await _with_contents(chunk, group, mirror, settings.max_file_bytes)
            chunk, group, size = indexer_pb2.FilesChunk(commit=repo.head_sha), [], 0
    if chunk.files:
        yield await _with_contents(chunk, group, mirror, settings.max_file_bytes)


async def _with_contents(
    chunk: indexer_pb2.FilesChunk, rows: list[SnapshotFile], mirror: str, max_bytes: int
) -> indexer_pb2.FilesChunk:
    """The chunk with its files' contents; a blob no longer in the mirror drops its file (absent,
    as GetFile answers file_not_found)."""
    contents = await asyncio.to_thread(_read_blobs, mirror, [r.blob_sha for r in rows], max_bytes)
    by_path = {r.path: content for r, content in zip(rows, contents, strict=True)}
    answer = indexer_pb2.FilesChunk(commit=chunk.commit)
    for f in chunk.files:
        if f.skipped:
            answer.files.append(f)
        elif (content := by_path.get(f.path)) is not None:
            f.content = content
            answer.files.append(f)
    return answer


def _read_blobs(mirror: str, shas: list[str], max_bytes: int) -> list[bytes | None]:
    with READERS.borrow(mirror, max_bytes) as reader:
        return [None if (blob := reader.read(sha)) is None else blob.data for sha in shas]


def _file_at(mirror: str, commit: str, path: str, max_bytes: int) -> indexer_pb2.FileContent:
    """A file at a commit other than the snapshot's: looked up in the tree, extracted now."""
    try:
        validate_rev(commit)
        listing = run_git(
            ["ls-tree", "-z", "-l", "--full-tree", "--end-of-options", commit],
            git_dir=mirror,
            user_args=[path],
            max_output=_LS_TREE_MAX,
        )
    except GitError as exc:
        raise ServiceError("validation_failed", f"unknown commit: {exc.message}", {"field": "commit"}) from None
    record = listing.stdout.split(b"\0", 1)[0]
    meta, _, _name = record.partition(b"\t")
    fields = meta.decode("ascii", "replace").split()
    if len(fields) != 4:
        raise ServiceError("file_not_found", "the path is not in that commit", {"path": path, "commit": commit})
    mode, kind, sha, size = fields
    if kind != "blob" or mode in ("120000", "160000"):
        raise _unsupported(path, "symlink" if mode == "120000" else kind)
    if size != "-" and int(size) > max_bytes:
        raise _unsupported(path, "oversized")
    from services.source.extract import extract  # the parser stack loads on first use

    content = _read_blob(mirror, sha, max_bytes) or b""
    facts = extract(path, content, max_bytes=max_bytes, blob_sha=sha)
    if facts.skipped and not _served_anyway(path, facts.skipped):
        raise _unsupported(path, facts.skipped)
    return indexer_pb2.FileContent(path=path, blob_sha=sha, content=content, facts=encode_facts(facts), commit=commit)


async def get_changes(
    db: Database, settings: IndexerSettings, hostapp: sources.HostApp, request: indexer_pb2.GetChangesRequest
) -> indexer_pb2.Changes:
    async with db.session() as session:
        repo = await access.load(session, request.repo, internal_ok=True)
    if request.staged:
        if repo.kind != "local":
            raise ServiceError(
                "validation_failed", "staged changes exist only for local repositories", {"field": "staged"}
            )
        local = await sources.check_local(settings, repo.source, repo.owner)
        try:
            staged = await asyncio.to_thread(staged_changes, local, max_blob_bytes=settings.max_file_bytes)
        except GitError as exc:
            raise ServiceError("validation_failed", exc.message, {"field": "staged", "reason": exc.code}) from None
        reply = indexer_pb2.Changes(head="STAGED")
        for item in staged:
            _add_change(reply, item.diff, item.content, item.base)
        return reply
    if not request.base or not request.head:
        raise ServiceError(
            "validation_failed", "base and head are required", {"field": "base" if not request.base else "head"}
        )
    mirror = sources.mirror_path(settings, repo.id)
    revisions = {"base": request.base, "head": request.head}
    missing = await asyncio.to_thread(_missing_commit, mirror, revisions)
    if missing:
        # The commits may be newer than the mirror: fetch once, then look again.
        source = await sources.source_for(repo, settings, hostapp)
        try:
            await asyncio.to_thread(ensure_mirror, source.location, mirror, token=source.token)
        except GitError as exc:
            raise ServiceError("validation_failed", exc.message, {"field": missing, "reason": exc.code}) from None
        missing = await asyncio.to_thread(_missing_commit, mirror, revisions)
    if missing:
        raise ServiceError(
            "validation_failed",
            f"{missing} {revisions[missing]!r} is not a commit of this repository",
            {"field": missing, "reason": "unknown_commit"},
        )
    try:
        diffs = await asyncio.to_thread(changed_files, mirror, request.base, request.head)
    except GitError as exc:
        raise ServiceError("validation_failed", exc.message, {"field": "head", "reason": exc.code}) from None
    contents = await asyncio.to_thread(_contents, str(mirror), diffs, settings.max_file_bytes)
    reply = indexer_pb2.Changes(base=request.base, head=request.head)
    for diff in diffs:
        _add_change(reply, diff, contents.get(diff.blob_sha), contents.get(diff.base_sha))
    return reply


def _missing_commit(mirror: Path, revisions: dict[str, str]) -> str | None:
    """The first field whose revision the mirror has no commit for (a malformed one is refused)."""
    for field, rev in revisions.items():
        try:
            resolve_ref(mirror, rev)
        except GitInputError as exc:
            raise ServiceError(
                "validation_failed", exc.message, {"field": field, "reason": "invalid_revision"}
            ) from None
        except GitError:
            return field
    return None


def _contents(mirror: str, diffs: list[ChangedFile], max_bytes: int) -> dict[str, bytes]:
    """Both sides' blobs by id: the head's to review, the base's to tell what the change introduced."""
    heads = [d.blob_sha for d in diffs if d.blob_sha and d.status != "deleted" and not d.binary]
    bases = [d.base_sha for d in diffs if d.base_sha and d.status not in ("added", "copied") and not d.binary]
    wanted = list(dict.fromkeys(heads + bases))
    out: dict[str, bytes] = {}
    with READERS.borrow(mirror, max_bytes) as reader:
        for sha in wanted:
            blob = reader.read(sha)
            if blob is not None and not blob.truncated:
                out[sha] = blob.data
    return out


def _add_change(
    reply: indexer_pb2.Changes, diff: ChangedFile, content: bytes | None, base: bytes | None = None
) -> None:
    item = reply.files.add(
        path=diff.path, status=diff.status, old_path=diff.old_path, content=content or b"", base_content=base or b""
    )
    for r in diff.ranges:
        item.added_lines.add(start=r.start, end=r.end)
