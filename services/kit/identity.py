"""The caller's identity as it crosses services: a protobuf ``Principal`` in metadata.

The gateway resolves a bearer token to a principal through billing once per request and
passes it to every service; services read it from the request context, never re-validate.
"""

from __future__ import annotations

from contextvars import ContextVar

from services.contracts.v1 import common_pb2
from services.kit.errors import ServiceError

PRINCIPAL_METADATA_KEY = "x-principal-bin"
REQUEST_ID_METADATA_KEY = "x-request-id"

ROLES = ("viewer", "member", "team-admin")  # ascending rank
_RANK = {role: i for i, role in enumerate(ROLES)}

principal_var: ContextVar[common_pb2.Principal | None] = ContextVar("principal", default=None)


def current_principal() -> common_pb2.Principal | None:
    return principal_var.get()


def user_principal() -> common_pb2.Principal | None:
    """The calling user, or None for a call from another service on the internal network.

    The gateway always forwards the authenticated caller, so a call without a user comes from
    inside the system (a worker or an event consumer) and every service reads it the same way.
    """
    principal = principal_var.get()
    return principal if principal is not None and principal.user_id else None


def require_principal() -> common_pb2.Principal:
    principal = principal_var.get()
    if principal is None or not principal.user_id:
        raise ServiceError("not_authenticated", "authentication required")
    return principal


def role_in(principal: common_pb2.Principal, org_id: str) -> str | None:
    for membership in principal.memberships:
        if membership.org_id == org_id:
            return membership.role
    return None


def role_at_least(role: str | None, minimum: str) -> bool:
    return role is not None and _RANK.get(role, -1) >= _RANK[minimum]


def owner_of_user(user_id: str) -> str:
    return f"user:{user_id}"


def owner_of_org(org_id: str) -> str:
    return f"org:{org_id}"


def can_access_owner(principal: common_pb2.Principal, owner: str, min_role: str = "viewer") -> bool:
    """Object-level authorization for anything owned by a user or an organization."""
    kind, _, ident = owner.partition(":")
    if kind == "user":
        return ident == principal.user_id
    if kind == "org":
        return role_at_least(role_in(principal, ident), min_role)
    return False


def accessible_owners(principal: common_pb2.Principal) -> list[str]:
    return [owner_of_user(principal.user_id)] + [owner_of_org(m.org_id) for m in principal.memberships]
