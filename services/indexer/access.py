"""Who may see and change a repository, checked wherever a caller names one.

A repository the caller cannot see is ``repo_not_found`` (never a 403 that would confirm it
exists); one they can see but not change is ``forbidden``. Calls without a principal come
from other services on the internal network (the analyzer learning on an event); only the
read RPCs accept them.
"""

from __future__ import annotations

import re

from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import common_pb2
from services.indexer import queries
from services.indexer.models import Repository
from services.kit.errors import ServiceError
from services.kit.identity import can_access_owner, owner_of_org, owner_of_user, role_in, user_principal

FULL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$")
_ID = re.compile(r"^[0-9a-f]{32}$")


def not_found(ref: str) -> ServiceError:
    return ServiceError("repo_not_found", "repository not found", {"repo": ref[:200]})


def visible(principal: common_pb2.Principal | None, repo: Repository) -> bool:
    if principal is None:
        return True  # an internal service call (see the module docstring)
    return bool(repo.owner) and can_access_owner(principal, repo.owner, "viewer")


async def load(
    session: AsyncSession,
    ref: str,
    *,
    min_role: str = "viewer",
    internal_ok: bool = False,
    lock: bool = False,
) -> Repository:
    """The repository named by an id or a hosted ``owner/repo``, authorized for ``min_role``."""
    principal = user_principal()
    if principal is None and not internal_ok:
        raise ServiceError("not_authenticated", "authentication required")
    ref = (ref or "").strip()
    repo: Repository | None = None
    if "/" in ref:
        if FULL_NAME.fullmatch(ref):
            candidates = await queries.repositories_by_full_name(session, ref)
            repo = next((r for r in candidates if r.owner and visible(principal, r)), None)
            if repo is not None and lock:
                repo = await queries.repository_by_id(session, repo.id, lock=True)
    elif _ID.fullmatch(ref):
        repo = await queries.repository_by_id(session, ref, lock=lock)
    if repo is None or not visible(principal, repo):
        raise not_found(ref)
    if principal is not None and min_role != "viewer" and not can_access_owner(principal, repo.owner, min_role):
        raise ServiceError("forbidden", f"this action needs the {min_role} role on the repository's organization")
    return repo


def owner_for(principal: common_pb2.Principal, org_id: str) -> str:
    """The owner a new repository gets: the organization (member role needed) or the caller."""
    if not org_id:
        return owner_of_user(principal.user_id)
    role = role_in(principal, org_id)
    if role is None:
        raise ServiceError("forbidden", "you are not a member of this organization", {"field": "org_id"})
    if not can_access_owner(principal, owner_of_org(org_id), "member"):
        raise ServiceError("forbidden", "adding repositories needs the member role", {"field": "org_id"})
    return owner_of_org(org_id)
