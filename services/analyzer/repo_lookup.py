"""Finding the repository a request names, authorizing the caller, and getting its model.

The hot path costs no round trip: the entry is in memory, and the caller is authorized against
the repository's owner as the indexed event reported it. A repository this replica has not seen
is looked up in the database; one the analyzer has never learned is asked of the indexer (which
authorizes the caller) and learned on demand. When the owner we know refuses the caller, the
indexer has the last word (an unclaimed hosted repository may have been claimed since).
"""

from __future__ import annotations

from services.analyzer import loading, model_store, queries
from services.analyzer.deps import Deps
from services.analyzer.state import LoadedRepo
from services.contracts.v1 import analyzer_pb2, indexer_pb2
from services.kit.errors import ServiceError, index_failed
from services.kit.identity import can_access_owner, user_principal

VIEW = "viewer"
WRITE = "member"


def _not_found(ref: str) -> ServiceError:
    return ServiceError("repo_not_found", "repository not found", {"repo": ref})


def _allowed(owner: str, min_role: str) -> bool | None:
    """True / False by the owner we know; None when it does not let the caller see the repository.

    Calls without a principal come from inside the system (the host-app worker), never from the
    gateway, which always forwards the authenticated caller.
    """
    principal = user_principal()
    if principal is None:
        return True
    if not owner or not can_access_owner(principal, owner, VIEW):
        return None
    return can_access_owner(principal, owner, min_role)


def _forbidden(min_role: str) -> ServiceError:
    return ServiceError("forbidden", f"this needs the {min_role} role in the repository's organization")


async def authorize(deps: Deps, entry: LoadedRepo, ref: str, min_role: str) -> None:
    allowed = _allowed(entry.owner, min_role)
    if allowed is None:
        remote = await deps.indexer.repository(entry.id)  # repo_not_found when the caller truly has no access
        if remote.owner and remote.owner != entry.owner:
            async with deps.db.session() as session:
                await queries.upsert_repository(
                    session, entry.id, owner=remote.owner, full_name=entry.full_name, head_sha=entry.head_sha
                )
            entry.owner = remote.owner
        allowed = _allowed(remote.owner, min_role)
        if allowed is None:  # the indexer lets the caller see it by a rule we do not mirror
            allowed = min_role == VIEW
    if not allowed:
        raise _forbidden(min_role)


async def resolve(deps: Deps, ref: str, min_role: str = VIEW) -> LoadedRepo:
    """The caller's repository with its model loaded (``repo_not_indexed`` when there is none)."""
    if not ref:
        raise ServiceError("validation_failed", "repo is required", {"field": "repo"})
    entry = deps.cache.get(ref)
    if entry is not None and entry.ready and deps.cache.fresh(entry):
        await authorize(deps, entry, ref, min_role)
        return entry
    async with deps.db.session() as session:
        if entry is not None:
            version = await queries.repository_version(session, entry.id)
            if version is None:
                deps.cache.drop(entry.id)
            elif version == entry.version and entry.ready:
                deps.cache.touch(entry)
                entry_ok = entry
            else:
                entry_ok = None
        else:
            entry_ok = None
        row = None
        if entry_ok is None:
            row = await queries.repository_by_ref(session, ref)
            if row is not None and row.model_id:
                # No per-repository lock: loading only reads, and a learning run holding the lock
                # for minutes must not stall requests that the previous model can serve.
                entry_ok = await loading.entry_for(session, row)
                deps.cache.put(entry_ok)
    if entry_ok is not None:
        await authorize(deps, entry_ok, ref, min_role)
        return entry_ok
    if row is not None and row.head_sha:
        # Known from an indexed event, not learned yet (the consumer may be learning it right now:
        # the lock makes this wait for that run instead of starting another).
        allowed = _allowed(row.owner, min_role)
        if allowed is False:
            raise _forbidden(min_role)
        if allowed:
            return await _learn(deps, row.id, row.head_sha, owner=row.owner, full_name=row.full_name)
    return await _learn_on_demand(deps, ref, min_role)


async def _learn(deps: Deps, repo_id: str, head: str, *, owner: str, full_name: str) -> LoadedRepo:
    async with deps.cache.lock(repo_id):
        cached = deps.cache.get(repo_id)
        if cached is not None and cached.ready and cached.commit == head:
            return cached
        async with deps.db.session() as session:
            entry = await model_store.learn_and_store(deps, session, repo_id, head, owner=owner, full_name=full_name)
        deps.cache.put(entry)
    return entry


async def _learn_on_demand(deps: Deps, ref: str, min_role: str) -> LoadedRepo:
    try:
        remote = await deps.indexer.repository(ref)  # the indexer authorizes the caller: repo_not_found
    except ServiceError as exc:
        if exc.code != "not_authenticated" or user_principal() is not None:
            raise
        # An internal caller (the host-app worker) naming a repository no indexed event told us about.
        raise ServiceError("repo_not_indexed", "no index of this repository has reached the analyzer yet") from None
    if _allowed(remote.owner, min_role) is False:
        raise _forbidden(min_role)
    full_name = remote.source if remote.kind == "hosted" else ""
    head = remote.index.head_sha
    if not head:
        raise not_indexed(ref, remote.index)
    return await _learn(deps, remote.id, head, owner=remote.owner, full_name=full_name)


def not_indexed(ref: str, status: indexer_pb2.IndexStatus) -> ServiceError:
    """No successful index yet: ``index_failed`` when the last attempt errored out (the spec's code
    for it; poll the status and fix the cause), ``repo_not_indexed`` while one is due or running."""
    if status.state == "failed":
        return index_failed(ref, status.error_code, status.error)
    state = status.state or "never indexed"
    return ServiceError("repo_not_indexed", "repository is not indexed yet", {"repo": ref, "state": state})


async def index_status(deps: Deps, entry: LoadedRepo) -> indexer_pb2.IndexStatus | None:
    """The live index status for read views; ``None`` when the indexer cannot say right now."""
    try:
        return await deps.indexer.index_status(entry.id)
    except ServiceError:
        return None


async def model_status(deps: Deps, ref: str) -> analyzer_pb2.ModelStatus:
    """Which commit's model analyses of ``ref`` use, without learning anything.

    Every replica re-reads the repository's model within ``CR_ANALYZER_CACHE_REVALIDATE_SECONDS``
    of its change, and each analysis names the commit it used.
    """
    if not ref:
        raise ServiceError("validation_failed", "repo is required", {"field": "repo"})
    async with deps.db.session() as session:
        row = await queries.repository_by_ref(session, ref)
    if row is None or _allowed(row.owner, VIEW) is None:
        remote = await deps.indexer.repository(row.id if row is not None else ref)  # repo_not_found for no access
        if row is None:
            return analyzer_pb2.ModelStatus(repository_id=remote.id)
    if not row.model_id:
        return analyzer_pb2.ModelStatus(repository_id=row.id, head_sha=row.head_sha)
    return analyzer_pb2.ModelStatus(
        repository_id=row.id, commit=row.model_commit, learned_at=row.learned_at, head_sha=row.head_sha
    )
