"""AnalyzeFile, AnalyzePullRequest and ReviewChangeset: gather the files, review, record, answer.

A pull request and a changeset are reviewed against their base, so that what the change did not
introduce is answered apart (``preexisting``): a pull request's base is its base commit (the
``base_content`` of ``GetChanges``), else the indexed snapshot; a diff's and a staged change's base
is the file before the change. A single file, or a path with no change, has no base.

Round trips are kept to what the input requires: a file sent with its content needs none, an
indexed path one ``GetFile``; a pull request with commits one ``GetChanges``, sent with patches
and no commits one ``StreamFiles`` for all the changed files' bases (however many: a call per
file made a 3,000-file request take seconds); a staged changeset one ``GetChanges``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Sequence

from services.analyzer import preferences, replacements, repo_lookup, results
from services.analyzer.deps import Deps
from services.analyzer.review import UNSUPPORTED, Outcome, Target, cap_change, review
from services.analyzer.state import LoadedRepo
from services.contracts.v1 import analyzer_pb2, indexer_pb2
from services.kit.errors import ServiceError
from services.kit.paths import repo_path
from services.source.diff import FileDiff, Hunk, added_lines, apply, parse_hunks, parse_unified_diff
from services.source.facts import FileFacts, decode

# Code-host file statuses -> ours.
_STATUS = {"removed": "deleted", "deleted": "deleted", "added": "added", "renamed": "renamed", "copied": "added"}
# Indexer errors that mean "no staged changes to read here" rather than a failure of ours.
_NO_STAGED = frozenset({"validation_failed", "bad_request", "not_implemented", "conflict", "not_found"})


def clean_path(path: str, field: str = "path") -> str:
    """The one path rule of every route (``services.kit.paths``), named by the request field."""
    try:
        return repo_path(path)
    except ValueError as exc:
        raise ServiceError("validation_failed", f"{field}: {exc}", {"field": field}) from None


def _unsupported(path: str, reason: str) -> ServiceError:
    return ServiceError(
        "unsupported_file_type", f"{path} cannot be analyzed ({reason})", {"path": path, "reason": reason}
    )


async def _finish(
    deps: Deps,
    entry: LoadedRepo,
    outcome: Outcome,
    *,
    kind: str,
    paths: Sequence[str],
    fmt: str,
    started: float,
    pr_number: int = 0,
) -> analyzer_pb2.AnalysisResult:
    findings = outcome.findings[: deps.settings.max_findings_per_analysis]
    preexisting = outcome.preexisting[: deps.settings.max_findings_per_analysis]
    evidences = [results.evidence(f) for f in findings]
    duration = (time.perf_counter() - started) * 1000
    async with deps.db.autocommit() as conn:  # one statement: see repository.record_audit
        audit_id = await results.record(
            deps,
            conn,
            entry,
            kind=kind,
            user_id=preferences.caller_id(),
            findings=findings,
            evidences=evidences,
            files=len(outcome.analyzed),
            paths=paths,
            skipped=outcome.skipped,
            duration_ms=duration,
            pr_number=pr_number,
            preexisting=outcome.preexisting_count,
        )
    # The relay is not woken: usage tolerates its poll interval (CR_ANALYZER_OUTBOX_POLL_SECONDS),
    # and waking it per analysis made the next request compete with the publish (~2x latency).
    return results.build_result(
        deps,
        entry,
        audit_id,
        findings,
        preexisting=preexisting,
        preexisting_count=outcome.preexisting_count,
        baseline=outcome.baseline,
        files=len(outcome.analyzed),
        skipped=outcome.skipped,
        duration_ms=duration,
        fmt=fmt,
    )


async def _run(deps: Deps, entry: LoadedRepo, targets: list[Target], *, change_level: bool) -> Outcome:
    assert entry.model is not None
    prefs = await preferences.for_owner(deps, None, entry.owner)
    max_bytes = deps.settings.max_file_bytes
    if len(targets) == 1 and not change_level:
        return review(entry, entry.model, targets, prefs, max_bytes=max_bytes, change_level=False)
    outcome = await asyncio.to_thread(
        review, entry, entry.model, targets, prefs, max_bytes=max_bytes, change_level=change_level, cap=False
    )
    if change_level:
        await replacements.drop_replaced(deps, entry, targets, outcome)
    return cap_change(outcome, prefs.check_prefs(entry.model.config.level).max_per_rule)


async def _indexed(deps: Deps, entry: LoadedRepo, path: str) -> Target:
    """The file as the current snapshot has it, with the facts the indexer extracted.

    The current snapshot rather than the model's commit: while a newer index is being learned,
    "the indexed file" is the newer one, and the indexer serves it without re-reading git.
    """
    reply = await deps.indexer.file(entry.id, path)
    if reply.skipped in UNSUPPORTED:
        raise _unsupported(path, reply.skipped)
    return Target(path=path, data=reply.content, facts=_facts_of(reply.facts))


async def analyze_file(deps: Deps, req: analyzer_pb2.AnalyzeFileRequest) -> analyzer_pb2.AnalysisResult:
    started = time.perf_counter()
    fmt = results.check_format(req.format)
    path = clean_path(req.path)
    entry = await repo_lookup.resolve(deps, req.repo, repo_lookup.WRITE)
    if deps.quota is not None:
        await deps.quota.ensure(entry.owner)
    if req.has_content:
        if len(req.content) > deps.settings.max_file_bytes:
            raise _unsupported(path, "oversized")
        target = Target(path=path, data=req.content)
    else:
        target = await _indexed(deps, entry, path)
    outcome = await _run(deps, entry, [target], change_level=False)
    reason = outcome.skipped.get(path, "")
    if reason in UNSUPPORTED:
        raise _unsupported(path, reason)
    return await _finish(deps, entry, outcome, kind="file", paths=[path], fmt=fmt, started=started)


def _changed_lines(ranges: Sequence[indexer_pb2.LineRange]) -> set[int]:
    return {line for r in ranges for line in range(r.start, max(r.start, r.end) + 1)}


def _from_changes(changes: indexer_pb2.Changes) -> list[Target]:
    return [
        Target(
            path=c.path,
            status=c.status or "modified",
            data=None if c.status == "deleted" else c.content,
            changed=_changed_lines(c.added_lines),
            old_path=c.old_path,
            base=None if c.status in _NO_BASE else c.base_content,
        )
        for c in changes.files
    ]


# A file these statuses name had no base side (a copy is a new file).
_NO_BASE = frozenset({"added", "copied"})


def _facts_of(blob: bytes) -> FileFacts | None:
    try:
        return decode(blob) if blob else None
    except Exception:  # facts of another schema: re-extracted from the content
        return None


async def _snapshot_files(deps: Deps, entry: LoadedRepo, paths: Iterable[str]) -> dict[str, indexer_pb2.FileContent]:
    """The indexed snapshot's files among ``paths``, in one call however many there are."""
    wanted = list(dict.fromkeys(paths))
    return await deps.indexer.files(entry.id, wanted) if wanted else {}


def _base_of(target: Target, found: indexer_pb2.FileContent | None) -> None:
    """``found`` (the snapshot's file, when it has one it did not skip) as ``target``'s base."""
    if found is not None and not found.skipped:
        target.base = found.content
        target.base_facts = _facts_of(found.facts)


def _snapshot_target(path: str, found: indexer_pb2.FileContent | None) -> Target:
    if found is None:
        return Target(path=path, skip="file_not_found")
    if found.skipped:
        return Target(path=path, skip=found.skipped)
    return Target(path=path, data=found.content, facts=_facts_of(found.facts))


def _patched(diff: FileDiff, base: indexer_pb2.FileContent | None) -> Target:
    """Head-side content of one file of a diff: its own lines when added, else ``base`` (the
    snapshot's file at its old path) patched."""
    target = Target(path=diff.path, status=diff.status, changed=diff.added_lines(), old_path=diff.old_path)
    if diff.status == "deleted":
        _base_of(target, base)
        return target
    if diff.binary:
        target.skip = "binary"
        return target
    if diff.status == "added":
        target.data = diff.new_text().encode()
        return target
    if base is None or base.skipped:
        target.skip = base.skipped if base is not None else "file_not_found"
        return target
    _base_of(target, base)
    text = apply(base.content.decode("utf-8", "replace"), diff.hunks)
    if text is not None:
        target.data = text.encode()
    return target


async def analyze_pull_request(deps: Deps, req: analyzer_pb2.AnalyzePullRequestRequest) -> analyzer_pb2.AnalysisResult:
    started = time.perf_counter()
    fmt = results.check_format(req.format)
    entry = await repo_lookup.resolve(deps, req.repo, repo_lookup.WRITE)
    if deps.quota is not None:
        await deps.quota.ensure(entry.owner)
    if req.files:
        targets = await _pr_targets(deps, entry, req)
    elif req.base and req.head:
        targets = _from_changes(await deps.indexer.changes(entry.id, base=req.base, head=req.head))
    else:
        raise ServiceError("validation_failed", "send the changed files, or base and head commits", {"field": "files"})
    outcome = await _run(deps, entry, targets, change_level=True)
    paths = [t.path for t in targets]
    return await _finish(
        deps, entry, outcome, kind="pull_request", paths=paths, fmt=fmt, started=started, pr_number=req.pr_number
    )


async def _pr_targets(deps: Deps, entry: LoadedRepo, req: analyzer_pb2.AnalyzePullRequestRequest) -> list[Target]:
    """Targets from the code host's file list: its patches say which lines changed.

    A file's base is the ``base_content`` the client sent, else (with the base and head commits)
    the base side ``GetChanges`` gives (with the head side of the files sent without content),
    else the indexed snapshot's file.
    """
    files = [(clean_path(f.path, "files.path"), f) for f in req.files]
    missing = [p for p, f in files if not f.content and _STATUS.get(f.status, "modified") != "deleted"]
    by_path: dict[str, Target] = {}
    if req.base and req.head:
        try:
            changes = await deps.indexer.changes(entry.id, base=req.base, head=req.head)
        except ServiceError:
            if missing:
                raise
            changes = None  # every content was sent: reviewed without a base rather than not at all
        if changes is not None:
            by_path = {t.path: t for t in _from_changes(changes)}
    targets: list[Target] = []
    pending: list[tuple[Target, list[Hunk]]] = []  # patched onto the snapshot's file below
    for path, f in files:
        status = _STATUS.get(f.status, "modified")
        known = by_path.get(path)
        hunks = parse_hunks(f.patch) if f.patch else []
        if f.patch:
            changed: set[int] | None = added_lines(hunks)
        elif known is not None:
            changed = known.changed
        else:
            # Code hosts omit the patch of very large diffs: a new file is all new, a modified one
            # cannot be limited to its changed lines, so it is not commented on line by line.
            changed = None if status == "added" else set()
        target = Target(path=path, status=status, changed=changed)
        if known is not None:
            target.old_path, target.base = known.old_path, known.base
        if f.HasField("base_content") and status not in _NO_BASE:
            target.base = f.base_content  # the client's own base wins: it knows its fork point
        if status != "deleted":
            if f.content:
                target.data = f.content
            elif known is not None:
                target.data = known.data
            elif hunks:
                pending.append((target, hunks))
        targets.append(target)
    unbased = [] if req.base and req.head else [t for t in targets if t.base is None and t.status not in _NO_BASE]
    snapshot = await _snapshot_files(
        deps, entry, [t.path for t, _ in pending if t.status != "added"] + [t.old_path or t.path for t in unbased]
    )
    for target, hunks in pending:
        patched = _patched(FileDiff(path=target.path, status=target.status, hunks=hunks), snapshot.get(target.path))
        target.data = patched.data
        if target.base is None:
            target.base, target.base_facts = patched.base, patched.base_facts
    for target in unbased:
        if target.base is None:
            _base_of(target, snapshot.get(target.old_path or target.path))
    return targets


async def _staged(deps: Deps, entry: LoadedRepo, *, required: bool) -> list[Target]:
    try:
        changes = await deps.indexer.changes(entry.id, staged=True)
    except ServiceError as exc:
        if exc.code not in _NO_STAGED:
            raise
        if required:
            raise ServiceError(
                "no_files", "no file paths given and no staged changes to read", {"reason": exc.message}
            ) from None
        return []
    return _from_changes(changes)


async def review_changeset(deps: Deps, req: analyzer_pb2.ReviewChangesetRequest) -> analyzer_pb2.AnalysisResult:
    started = time.perf_counter()
    fmt = results.check_format(req.format)
    entry = await repo_lookup.resolve(deps, req.repo, repo_lookup.WRITE)
    if deps.quota is not None:
        await deps.quota.ensure(entry.owner)
    if req.diff.strip():
        diffs = parse_unified_diff(req.diff)
        if not diffs:
            raise ServiceError("validation_failed", "the diff names no file", {"field": "diff"})
        for d in diffs:
            d.path = clean_path(d.path, "diff")
            d.old_path = clean_path(d.old_path, "diff") if d.old_path else ""
        bases = await _snapshot_files(deps, entry, (d.old_path or d.path for d in diffs if d.status != "added"))
        targets = [_patched(d, bases.get(d.old_path or d.path)) for d in diffs]
    elif req.file_paths:
        paths = list(dict.fromkeys(clean_path(p, "file_paths") for p in req.file_paths))
        staged = {t.path: t for t in await _staged(deps, entry, required=False)}
        found = await _snapshot_files(deps, entry, (p for p in paths if p not in staged))
        targets = [staged.get(p) or _snapshot_target(p, found.get(p)) for p in paths]
    else:
        targets = await _staged(deps, entry, required=True)
    if not targets:
        raise ServiceError("no_files", "nothing to review: no file paths and no staged changes")
    outcome = await _run(deps, entry, targets, change_level=True)
    return await _finish(
        deps, entry, outcome, kind="changeset", paths=[t.path for t in targets], fmt=fmt, started=started
    )
