"""Authorization of billing's own operations, on top of ``services.kit.identity``: every
function that takes an organization id from the caller goes through here."""

from __future__ import annotations

from services.contracts.v1 import common_pb2
from services.kit.errors import ServiceError
from services.kit.identity import (
    can_access_owner,
    owner_of_org,
    owner_of_user,
    require_principal,
    role_at_least,
    role_in,
)


def caller() -> common_pb2.Principal:
    return require_principal()


def require_role(principal: common_pb2.Principal, org_id: str, minimum: str) -> str:
    """The caller's role in the organization, or 403: a wrong organization and a missing role
    look the same, so the answer does not reveal whether the organization exists."""
    role = role_in(principal, org_id)
    if not role_at_least(role, minimum):
        raise ServiceError(
            "forbidden",
            f"requires the {minimum} role in this organization",
            {"org_id": org_id, "required_role": minimum},
        )
    return role or ""


def account_owner(principal: common_pb2.Principal, org_id: str, minimum: str) -> str:
    """The account an account route acts on: the caller's own when no organization is named."""
    if not org_id:
        return owner_of_user(principal.user_id)
    require_role(principal, org_id, minimum)
    return owner_of_org(org_id)


def split_owner(owner: str) -> tuple[str, str]:
    kind, _, ident = owner.partition(":")
    if kind not in ("user", "org") or not ident:
        raise ServiceError("validation_failed", "owner must be 'user:<id>' or 'org:<id>'", {"field": "owner"})
    return kind, ident


def may_access(owner: str, min_role: str) -> bool:
    """``CheckAccess``: whether the caller holds at least ``min_role`` (viewer by default) on the
    owner; the principal says it, no database. A malformed owner is refused before the caller."""
    split_owner(owner)
    return can_access_owner(caller(), owner, min_role or "viewer")
