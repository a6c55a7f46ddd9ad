"""Teams: team-admin only, invitations bounded by seats, never without an admin."""

from __future__ import annotations

import asyncio

import pytest

from services.contracts.v1 import billing_pb2, common_pb2
from services.kit.errors import ServiceError
from tests.billing.conftest import Billing, unique


async def team(billing: Billing, seats: int = 5) -> tuple[str, common_pb2.Principal]:
    name = unique("team")
    _, admin = await billing.user(org=name)
    org_id = billing.org_id(admin, name)
    if seats != 5:
        await billing.call("ChangeSeats", billing_pb2.ChangeSeatsRequest(org_id=org_id, seats=seats), admin)
    return org_id, admin


async def invite(
    billing: Billing, org_id: str, admin: common_pb2.Principal, role: str = "member"
) -> billing_pb2.Member:
    request = billing_pb2.InviteMemberRequest(org_id=org_id, login=unique("invitee"), role=role)
    return (await billing.call("InviteMember", request, admin)).member


async def expect(code: str, call: object) -> ServiceError:
    with pytest.raises(ServiceError) as err:
        await call  # type: ignore[misc]
    assert err.value.code == code, err.value
    return err.value


async def test_invitations_stop_at_the_seat_count(billing: Billing) -> None:
    org_id, admin = await team(billing, seats=2)
    member = await invite(billing, org_id, admin)
    assert member.status == "invited"
    error = await expect("seat_limit_reached", invite(billing, org_id, admin))
    assert error.details == {"seats": 2, "members": 2}
    assert error.http_status == 409
    listed = await billing.call("ListMembers", billing_pb2.ListMembersRequest(org_id=org_id), admin)
    assert listed.seats == 2
    assert sorted(m.status for m in listed.members) == ["active", "invited"]


async def test_concurrent_invitations_cannot_overbook_seats(billing: Billing) -> None:
    org_id, admin = await team(billing, seats=3)
    results = await asyncio.gather(*(invite(billing, org_id, admin) for _ in range(6)), return_exceptions=True)
    assert sum(not isinstance(r, Exception) for r in results) == 2
    assert all(r.code == "seat_limit_reached" for r in results if isinstance(r, ServiceError))


async def test_every_team_operation_is_for_team_admins_only(billing: Billing) -> None:
    org_id, admin = await team(billing)
    name = next(m.org_name for m in admin.memberships)
    _, member = await billing.user(org=name, role="member")
    _, stranger = await billing.user(org=unique("elsewhere"))
    target = (await billing.call("ListMembers", billing_pb2.ListMembersRequest(org_id=org_id), admin)).members[0].id
    for caller in (member, stranger):
        for method, request in (
            ("ListMembers", billing_pb2.ListMembersRequest(org_id=org_id)),
            ("InviteMember", billing_pb2.InviteMemberRequest(org_id=org_id, login=unique("x"))),
            ("RemoveMember", billing_pb2.RemoveMemberRequest(org_id=org_id, member_id=target)),
            ("ChangeMemberRole", billing_pb2.ChangeMemberRoleRequest(org_id=org_id, member_id=target, role="viewer")),
            ("ChangeSeats", billing_pb2.ChangeSeatsRequest(org_id=org_id, seats=9)),
        ):
            error = await expect("forbidden", billing.call(method, request, caller))
            assert error.http_status == 403


async def test_a_member_id_of_another_organization_is_not_found(billing: Billing) -> None:
    org_a, admin_a = await team(billing)
    org_b, admin_b = await team(billing)
    b_member = await invite(billing, org_b, admin_b)
    await expect(
        "not_found",
        billing.call("RemoveMember", billing_pb2.RemoveMemberRequest(org_id=org_a, member_id=b_member.id), admin_a),
    )
    await expect(
        "not_found",
        billing.call(
            "ChangeMemberRole",
            billing_pb2.ChangeMemberRoleRequest(org_id=org_a, member_id=b_member.id, role="viewer"),
            admin_a,
        ),
    )


async def test_the_last_admin_can_be_neither_removed_nor_demoted(billing: Billing) -> None:
    org_id, admin = await team(billing)
    mine = (await billing.call("ListMembers", billing_pb2.ListMembersRequest(org_id=org_id), admin)).members[0]
    error = await expect(
        "conflict",
        billing.call("RemoveMember", billing_pb2.RemoveMemberRequest(org_id=org_id, member_id=mine.id), admin),
    )
    assert error.details["reason"] == "last_admin"
    demote = billing_pb2.ChangeMemberRoleRequest(org_id=org_id, member_id=mine.id, role="member")
    await expect("conflict", billing.call("ChangeMemberRole", demote, admin))


async def test_roles_change_and_members_leave(billing: Billing) -> None:
    name = unique("team")
    admin_token, admin = await billing.user(org=name)
    org_id = billing.org_id(admin, name)
    _, second = await billing.user(org=name, role="member")
    members = (await billing.call("ListMembers", billing_pb2.ListMembersRequest(org_id=org_id), admin)).members
    second_id = next(m.id for m in members if m.user_id == second.user_id)
    promote = billing_pb2.ChangeMemberRoleRequest(org_id=org_id, member_id=second_id, role="team-admin")
    assert (await billing.call("ChangeMemberRole", promote, admin)).member.role == "team-admin"
    first_id = next(m.id for m in members if m.user_id == admin.user_id)
    # With a second admin, the first may go; their next request carries no membership.
    await billing.call("RemoveMember", billing_pb2.RemoveMemberRequest(org_id=org_id, member_id=first_id), admin)
    assert list((await billing.principal(admin_token)).memberships) == []
    bad_role = billing_pb2.ChangeMemberRoleRequest(org_id=org_id, member_id=second_id, role="owner")
    await expect("validation_failed", billing.call("ChangeMemberRole", bad_role, _promoted(second, org_id)))


def _promoted(principal: common_pb2.Principal, org_id: str) -> common_pb2.Principal:
    """The principal as the gateway would rebuild it after a role change."""
    fresh = common_pb2.Principal()
    fresh.CopyFrom(principal)
    for membership in fresh.memberships:
        if membership.org_id == org_id:
            membership.role = "team-admin"
    return fresh


async def test_seats_never_go_below_members(billing: Billing) -> None:
    org_id, admin = await team(billing, seats=3)
    await invite(billing, org_id, admin)
    await invite(billing, org_id, admin)
    error = await expect(
        "conflict", billing.call("ChangeSeats", billing_pb2.ChangeSeatsRequest(org_id=org_id, seats=2), admin)
    )
    assert error.details["members"] == 3
    changed = await billing.call("ChangeSeats", billing_pb2.ChangeSeatsRequest(org_id=org_id, seats=4), admin)
    assert changed.subscription.seats == 4
    assert changed.subscription.plan == "free"
    await invite(billing, org_id, admin)


async def test_free_plan_bounds_seats(billing: Billing) -> None:
    org_id, admin = await team(billing)
    max_seats = billing.deps.catalogue.free.max_seats
    error = await expect(
        "plan_required",
        billing.call("ChangeSeats", billing_pb2.ChangeSeatsRequest(org_id=org_id, seats=max_seats + 1), admin),
    )
    assert error.details == {"max_seats": max_seats}


async def test_an_invitee_accepts_or_declines_with_their_own_token(billing: Billing) -> None:
    org_id, admin = await team(billing, seats=3)
    login = unique("invitee")
    token, invitee = await billing.user(login=login)
    invited = await billing.call("InviteMember", billing_pb2.InviteMemberRequest(org_id=org_id, login=login), admin)
    assert invited.member.user_id == invitee.user_id
    assert list((await billing.principal(token)).memberships) == []  # no access before accepting
    pending = (await billing.call("ListInvitations", billing_pb2.ListInvitationsRequest(), invitee)).invitations
    assert [(i.org_id, i.role, i.status) for i in pending] == [(org_id, "member", "invited")]

    # Nobody else can answer it.
    _, stranger = await billing.user()
    answer = billing_pb2.AnswerInvitationRequest(org_id=org_id, accept=True)
    await expect("not_found", billing.call("AnswerInvitation", answer, stranger))

    accepted = (await billing.call("AnswerInvitation", answer, invitee)).invitation
    assert (accepted.org_id, accepted.status) == (org_id, "active")
    assert [(m.org_id, m.role) for m in (await billing.principal(token)).memberships] == [(org_id, "member")]
    again = (await billing.call("AnswerInvitation", answer, invitee)).invitation
    assert again.status == "active"  # accepting twice answers the same
    assert (await billing.call("ListInvitations", billing_pb2.ListInvitationsRequest(), invitee)).invitations == []
    members = await billing.call("ListMembers", billing_pb2.ListMembersRequest(org_id=org_id), admin)
    assert {m.login: m.status for m in members.members}[login] == "active"

    # Declining frees the seat: the third seat goes to someone else.
    other_login = unique("invitee")
    _, other = await billing.user(login=other_login)
    request = billing_pb2.InviteMemberRequest(org_id=org_id, login=other_login)
    await billing.call("InviteMember", request, admin)
    await expect("seat_limit_reached", invite(billing, org_id, admin))
    decline = billing_pb2.AnswerInvitationRequest(org_id=org_id, accept=False)
    await billing.call("AnswerInvitation", decline, other)
    await expect("not_found", billing.call("AnswerInvitation", decline, other))
    assert (await invite(billing, org_id, admin)).status == "invited"
