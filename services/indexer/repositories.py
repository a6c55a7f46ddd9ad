"""Repositories: register (local path, git URL, hosted owner/repo), show, list, delete, and
the hosted lifecycle driven by installation events and ``host_index``."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import common_pb2, events_pb2, indexer_pb2
from services.indexer import access, queries, runs, sources
from services.indexer.caps import RepositoryCap
from services.indexer.changes import repository_changed
from services.indexer.models import Repository, new_id, outbox
from services.indexer.settings import IndexerSettings
from services.kit.bus import SUBJECT_REPOSITORY_DELETED
from services.kit.db import Database, advisory_lock
from services.kit.errors import ServiceError
from services.kit.identity import accessible_owners, require_principal
from services.kit.outbox import add_event
from services.kit.paging import REPOSITORIES, check_limit, decode_cursor, encode_cursor

DEFAULT_PAGE = 50
MAX_PAGE = 500


@dataclass
class Registration:
    kind: str
    source: str
    name: str
    full_name: str | None = None
    local_paths: tuple[str, ...] = ()  # a local repository's work tree and git directory


async def registration_for(
    settings: IndexerSettings, request: indexer_pb2.CreateRepositoryRequest, owner: str
) -> Registration:
    """Validate the one source the request names (before any database work)."""
    given = [f for f in ("path", "url", "full_name") if getattr(request, f)]
    if len(given) != 1:
        raise ServiceError(
            "validation_failed",
            "give exactly one of path, url or full_name",
            {"field": "path" if not given else given[1], "reason": "one_source"},
        )
    name = request.name.strip()
    if request.path:
        local = await sources.check_local(settings, request.path, owner)
        reg = Registration("local", str(local.path), name or os.path.basename(str(local.path)))
        reg.local_paths = (str(local.path), str(local.git_dir))
        return reg
    if request.url:
        url = await sources.check_url(settings, request.url)
        return Registration("url", url.url, name or sources.name_from_url(url.url))
    full_name = request.full_name.strip()
    if not access.FULL_NAME.fullmatch(full_name):
        raise ServiceError("validation_failed", "full_name must look like owner/repo", {"field": "full_name"})
    return Registration("hosted", full_name, name or full_name, full_name)


async def create(
    db: Database, settings: IndexerSettings, request: indexer_pb2.CreateRepositoryRequest, cap: RepositoryCap
) -> tuple[Repository, indexer_pb2.IndexStatus]:
    principal = require_principal()
    owner = access.owner_for(principal, request.org_id)
    reg = await registration_for(settings, request, owner)
    async with db.session() as session:
        if reg.local_paths:
            await _refuse_claimed_path(session, principal, reg)
        repo = await find_or_create(session, owner, reg, request.installation_id, cap=cap)
        return repo, await runs.current_status(session, repo)


async def _refuse_claimed_path(session: AsyncSession, principal: common_pb2.Principal, reg: Registration) -> None:
    """A server-side path belongs to the account that registered it first: registering it (or a
    directory inside or around it) again is for those who can already see that repository,
    never a way into another organization's data."""
    await advisory_lock(session, "indexer.local-registration")  # two registrations cannot both pass
    for other in await queries.local_repositories_overlapping(session, reg.local_paths):
        if not access.visible(principal, other):
            raise ServiceError(
                "validation_failed",
                "this path is registered by an account you do not belong to",
                {"field": "path", "reason": "path_not_allowed"},
            )


async def find_or_create(
    session: AsyncSession, owner: str, reg: Registration, installation_id: int = 0, *, cap: RepositoryCap | None = None
) -> Repository:
    """Registering the same source twice for one owner returns the first registration; a new
    one (or a claimed one) must fit the owner's plan when ``cap`` is given."""
    existing = await queries.repository_by_source(session, owner, reg.kind, reg.source)
    if existing is not None:
        return existing
    if cap is not None and owner:
        await cap.ensure_room(session, owner)
        existing = await queries.repository_by_source(session, owner, reg.kind, reg.source)
        if existing is not None:  # registered while we waited for the owner's lock
            return existing
    if reg.kind == "hosted":
        claimed = await _claim_unowned(session, owner, reg.source)
        if claimed is not None:
            await repository_changed(session, claimed.id, owner, "claimed")
            return claimed
    repo = Repository(
        id=new_id(),
        name=reg.name[:200],
        kind=reg.kind,
        source=reg.source,
        full_name=reg.full_name,
        owner=owner,
        installation_id=installation_id or None,
        status="active",
        default_branch="",
        head_sha="",
    )
    try:
        async with session.begin_nested():
            session.add(repo)
    except IntegrityError:
        # A concurrent registration of the same source won: return it.
        existing = await queries.repository_by_source(session, owner, reg.kind, reg.source)
        if existing is None:
            raise
        return existing
    await repository_changed(session, repo.id, owner, "registered")
    return repo


async def _claim_unowned(session: AsyncSession, owner: str, full_name: str) -> Repository | None:
    """A hosted repository an installation event registered before anyone indexed it."""
    for repo in await queries.repositories_by_full_name(session, full_name):
        if not repo.owner:
            locked = await queries.repository_by_id(session, repo.id, lock=True)
            if locked is not None and not locked.owner:
                locked.owner = owner
                return locked
    return None


async def get(db: Database, ref: str) -> tuple[Repository, indexer_pb2.IndexStatus]:
    async with db.session() as session:
        repo = await access.load(session, ref, internal_ok=True)
        return repo, await runs.current_status(session, repo)


async def count(db: Database, owner: str) -> int:
    principal = require_principal()
    if owner not in accessible_owners(principal):
        raise ServiceError("forbidden", "the caller cannot see this owner's repositories", {"field": "owner"})
    async with db.session() as session:
        return await queries.count_repositories(session, owner)


def _decode_cursor(cursor: str) -> tuple[int, str] | None:
    value = decode_cursor(cursor, REPOSITORIES)  # the pattern holds: digits "." id
    if value is None:
        return None
    created, _, rid = value.partition(".")
    return int(created), rid


def _encode_cursor(repo: Repository) -> str:
    return encode_cursor(REPOSITORIES, f"{repo.created_at}.{repo.id}")


async def list_page(
    db: Database, page: common_pb2.PageRequest
) -> tuple[list[tuple[Repository, indexer_pb2.IndexStatus]], common_pb2.PageInfo]:
    principal = require_principal()
    limit = check_limit(page.limit, DEFAULT_PAGE, MAX_PAGE)
    async with db.session() as session:
        repos, total = await queries.list_repositories(
            session, accessible_owners(principal), limit + 1, _decode_cursor(page.cursor)
        )
        more = len(repos) > limit
        repos = repos[:limit]
        latest = await queries.runs_by_id(session, [r.last_run_id for r in repos if r.last_run_id])
    items = [(r, runs.status_of(r, latest.get(r.last_run_id or ""))) for r in repos]
    info = common_pb2.PageInfo(next_cursor=_encode_cursor(repos[-1]) if more else "", total=total)
    return items, info


async def delete(db: Database, settings: IndexerSettings, ref: str) -> None:
    """Remove the repository and all its index data; a running index notices at its next
    heartbeat (its run row is gone) and stops."""
    async with db.session() as session:
        repo = await access.load(session, ref, min_role="member", lock=True)
        repo_id = repo.id
        await queries.delete_repository(session, repo_id)
        await add_event(
            session,
            outbox,
            SUBJECT_REPOSITORY_DELETED,
            "repository.deleted",
            events_pb2.RepositoryDeleted(repository_id=repo_id),
        )
    await asyncio.to_thread(sources.remove_mirror, settings, repo_id)


async def host_index(
    db: Database,
    settings: IndexerSettings,
    hostapp: sources.HostApp,
    request: indexer_pb2.HostIndexRequest,
    cap: RepositoryCap,
) -> Repository:
    """Create (or find, or claim) the hosted repository and queue an index of it."""
    principal = require_principal()
    owner = access.owner_for(principal, request.org_id)
    full_name = request.full_name.strip()
    if not access.FULL_NAME.fullmatch(full_name):
        raise ServiceError("validation_failed", "full_name must look like owner/repo", {"field": "full_name"})
    # Fail fast when the app is not installed there or hostapp cannot issue credentials.
    creds = await hostapp.clone_credentials(full_name)
    reg = Registration("hosted", full_name, full_name, full_name)
    async with db.session() as session:
        repo = await find_or_create(session, owner, reg, creds.installation_id, cap=cap)
        locked = await queries.repository_by_id(session, repo.id, lock=True)
        assert locked is not None
        await runs.start(session, locked, incremental=request.incremental)
        return locked


async def on_installation_repositories(session: AsyncSession, env: events_pb2.EventEnvelope) -> None:
    """Added repositories are registered (unowned until someone indexes them); removed ones
    are retired: no new index runs, existing data stays readable until deleted."""
    change = events_pb2.InstallationRepositoriesChanged.FromString(env.payload)
    for full_name in change.added:
        if not access.FULL_NAME.fullmatch(full_name):
            continue
        if await queries.set_status_by_full_name(session, full_name, "active", change.installation_id):
            await repository_changed(session, "", "", "reactivated")
            continue
        reg = Registration("hosted", full_name, full_name, full_name)
        await find_or_create(session, "", reg, change.installation_id)
    for full_name in change.removed:
        if access.FULL_NAME.fullmatch(full_name) and await queries.set_status_by_full_name(
            session, full_name, "retired", 0
        ):
            await repository_changed(session, "", "", "retired")


def to_proto(repo: Repository, status: indexer_pb2.IndexStatus) -> indexer_pb2.Repository:
    return indexer_pb2.Repository(
        id=repo.id,
        name=repo.name,
        kind=repo.kind,
        source=repo.source,
        owner=repo.owner,
        default_branch=repo.default_branch,
        created_at=repo.created_at,
        index=status,
        installation_id=repo.installation_id or 0,
        status=repo.status,
    )
