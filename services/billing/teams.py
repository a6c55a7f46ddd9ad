"""Team rules (team-admin only): members, invitations bounded by seats, roles, removal that
never leaves an organization without an admin. Every mutation locks the organization row."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from services.billing import queries
from services.billing.access import require_role
from services.billing.identity import principals_changed
from services.billing.models import Membership, Organization, User
from services.contracts.v1 import billing_pb2, common_pb2
from services.kit.db import Database
from services.kit.errors import ServiceError
from services.kit.identity import ROLES

ADMIN = "team-admin"


def member_message(membership: Membership, user: User) -> billing_pb2.Member:
    return billing_pb2.Member(
        id=membership.id,
        user_id=user.id,
        login=user.login,
        email=user.email,
        role=membership.role,
        status=membership.status,
        joined_at=membership.created_at,
    )


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise ServiceError("validation_failed", f"role must be one of {', '.join(ROLES)}", {"field": "role"})
    return role


async def _admin_org(session: AsyncSession, principal: common_pb2.Principal, org_id: str) -> Organization:
    require_role(principal, org_id, ADMIN)
    org = await queries.lock_org(session, org_id)
    if org is None:  # the principal was built from this row moments ago; it was deleted since
        raise ServiceError("forbidden", "requires the team-admin role in this organization", {"org_id": org_id})
    return org


async def list_members(db: Database, principal: common_pb2.Principal, org_id: str) -> billing_pb2.ListMembersResponse:
    require_role(principal, org_id, ADMIN)
    async with db.session() as session:
        org = await session.get(Organization, org_id)
        response = billing_pb2.ListMembersResponse(seats=org.seats if org else 0)
        for membership, user in await queries.members_of(session, org_id):
            response.members.append(member_message(membership, user))
    return response


async def invite(
    db: Database, principal: common_pb2.Principal, org_id: str, login: str, email: str, role: str
) -> billing_pb2.Member:
    async with db.session() as session:
        org = await _admin_org(session, principal, org_id)
        role = _check_role(role or "member")
        login, email = login.strip(), email.strip()
        if not login:
            raise ServiceError(
                "validation_failed", "login (the invitee's code-host login) is required", {"field": "login"}
            )
        seated = await queries.seated_count(session, org.id)
        if seated >= org.seats:
            raise ServiceError(
                "seat_limit_reached",
                f"all {org.seats} seats are taken; add seats first",
                {"seats": org.seats, "members": seated},
            )
        user = await queries.user_by_login_ci(session, login)
        if user is None:
            # A placeholder the invitee's first sign-in links to (matched by login).
            user = User(login=login, email=email)
            session.add(user)
            await session.flush()
        if await queries.membership_of_user(session, org.id, user.id) is not None:
            raise ServiceError("conflict", f"{user.login} is already a member or invited", {"login": user.login})
        membership = Membership(org_id=org.id, user_id=user.id, role=role, status="invited")
        session.add(membership)
        await session.flush()
        return member_message(membership, user)


async def _member(session: AsyncSession, org_id: str, member_id: str) -> tuple[Membership, User]:
    membership = await queries.membership_in(session, org_id, member_id) if member_id else None
    user = await queries.user_by_id(session, membership.user_id) if membership else None
    if membership is None or user is None:
        raise ServiceError("not_found", "no such member in this organization", {"member_id": member_id})
    return membership, user


async def _keeps_an_admin(session: AsyncSession, org_id: str, membership: Membership) -> None:
    if membership.role == ADMIN and membership.status == "active" and await queries.admin_count(session, org_id) <= 1:
        raise ServiceError("conflict", "an organization keeps at least one team-admin", {"reason": "last_admin"})


async def remove(db: Database, principal: common_pb2.Principal, org_id: str, member_id: str) -> None:
    async with db.session() as session:
        org = await _admin_org(session, principal, org_id)
        membership, _ = await _member(session, org.id, member_id)
        await _keeps_an_admin(session, org.id, membership)
        await session.delete(membership)
        await session.flush()
        await principals_changed(session, [membership.user_id], "membership_removed")


async def change_role(
    db: Database, principal: common_pb2.Principal, org_id: str, member_id: str, role: str
) -> billing_pb2.Member:
    async with db.session() as session:
        org = await _admin_org(session, principal, org_id)
        role = _check_role(role)
        membership, user = await _member(session, org.id, member_id)
        if role != ADMIN:
            await _keeps_an_admin(session, org.id, membership)
        membership.role = role
        await session.flush()
        await principals_changed(session, [user.id], "role_changed")
        return member_message(membership, user)


async def check_seats(session: AsyncSession, principal: common_pb2.Principal, org_id: str, seats: int) -> Organization:
    """The organization, locked, when the new seat count is acceptable (a step of
    ``subscriptions.change_seats``, which then asks the provider for the quantity and stores it)."""
    org = await _admin_org(session, principal, org_id)
    if seats < 1 or seats > 100_000:
        raise ServiceError("validation_failed", "seats must be 1 to 100000", {"field": "seats"})
    seated = await queries.seated_count(session, org.id)
    if seats < seated:
        raise ServiceError(
            "conflict",
            f"{seated} members hold seats; remove members before going below that",
            {"reason": "below_members", "members": seated, "seats": seats},
        )
    return org


def invitation_message(membership: Membership, org: Organization) -> billing_pb2.Invitation:
    return billing_pb2.Invitation(
        org_id=org.id,
        org_name=org.name,
        role=membership.role,
        status=membership.status,
        invited_at=membership.created_at,
    )


async def invitations(db: Database, principal: common_pb2.Principal) -> billing_pb2.ListInvitationsResponse:
    """The caller's pending invitations (its active memberships are in the principal)."""
    reply = billing_pb2.ListInvitationsResponse()
    async with db.session() as session:
        for membership, org in await queries.memberships_of(session, principal.user_id, "invited"):
            reply.invitations.append(invitation_message(membership, org))
    return reply


async def answer_invitation(
    db: Database, principal: common_pb2.Principal, org_id: str, accept: bool
) -> billing_pb2.Invitation:
    """Accept (the membership becomes active; its seat was taken by the invitation) or decline
    (the invitation and its seat go). Accepting twice answers the same; only the invitee may."""
    async with db.session() as session:
        org = await queries.lock_org(session, org_id) if org_id else None
        membership = await queries.membership_of_user(session, org.id, principal.user_id) if org else None
        if org is None or membership is None or (membership.status != "invited" and not accept):
            raise ServiceError("not_found", "no pending invitation to this organization", {"org_id": org_id})
        answer = invitation_message(membership, org)
        if accept:
            membership.status = answer.status = "active"
            await principals_changed(session, [principal.user_id], "membership_changed")
        else:
            await session.delete(membership)
        await session.flush()
    return answer
