"""Teams (team-admin only): members, invitations, roles and seats."""

from __future__ import annotations

from fastapi import APIRouter, Response

from services.api.account import (
    InvitationInfo,
    InvitationList,
    InvitationResult,
    MemberInfo,
    MemberList,
    MemberResult,
    SubscriptionResult,
)
from services.api.schemas import ChangeRole, ChangeSeats, Invite
from services.api.types import from_seconds
from services.contracts.v1 import billing_pb2
from services.gateway.deps import ClientsDep, PrincipalDep
from services.gateway.routes.account import subscription_result
from services.kit.grpc_client import call
from services.kit.messages import plain

router = APIRouter(prefix="/teams", tags=["teams"])
# The invitee's side of an invitation: any signed-in user, about their own invitations.
invitations_router = APIRouter(prefix="/invitations", tags=["teams"])


def member_info(message: billing_pb2.Member) -> MemberInfo:
    return MemberInfo.model_validate({**plain(message), "joined_at": from_seconds(message.joined_at)})


def invitation_info(message: billing_pb2.Invitation) -> InvitationInfo:
    return InvitationInfo.model_validate({**plain(message), "invited_at": from_seconds(message.invited_at)})


@router.get("/{org_id}/members", response_model=MemberList, summary="List members and the seat count")
async def members(org_id: str, principal: PrincipalDep, clients: ClientsDep) -> MemberList:
    request = billing_pb2.ListMembersRequest(org_id=org_id)
    reply = await call(clients.billing.ListMembers, request, principal=principal)
    return MemberList(members=[member_info(m) for m in reply.members], seats=reply.seats)


@router.post(
    "/{org_id}/invite", status_code=201, response_model=MemberResult, summary="Invite a member (bounded by seats)"
)
async def invite(org_id: str, body: Invite, principal: PrincipalDep, clients: ClientsDep) -> MemberResult:
    request = billing_pb2.InviteMemberRequest(org_id=org_id, **body.model_dump(exclude_none=True))
    reply = await call(clients.billing.InviteMember, request, principal=principal)
    return MemberResult(member=member_info(reply.member))


@router.delete(
    "/{org_id}/members/{member_id}",
    status_code=204,
    response_class=Response,
    response_model=None,
    summary="Remove a member (never the last admin)",
)
async def remove(org_id: str, member_id: str, principal: PrincipalDep, clients: ClientsDep) -> Response:
    request = billing_pb2.RemoveMemberRequest(org_id=org_id, member_id=member_id)
    await call(clients.billing.RemoveMember, request, principal=principal)
    return Response(status_code=204)


@router.patch("/{org_id}/members/{member_id}/role", response_model=MemberResult, summary="Change a member's role")
async def change_role(
    org_id: str, member_id: str, body: ChangeRole, principal: PrincipalDep, clients: ClientsDep
) -> MemberResult:
    request = billing_pb2.ChangeMemberRoleRequest(org_id=org_id, member_id=member_id, role=body.role)
    reply = await call(clients.billing.ChangeMemberRole, request, principal=principal)
    return MemberResult(member=member_info(reply.member))


@router.post(
    "/{org_id}/seats",
    response_model=SubscriptionResult,
    summary="Change the seat count (never below current members; the subscription follows)",
)
async def seats(org_id: str, body: ChangeSeats, principal: PrincipalDep, clients: ClientsDep) -> SubscriptionResult:
    request = billing_pb2.ChangeSeatsRequest(org_id=org_id, seats=body.seats)
    return subscription_result(await call(clients.billing.ChangeSeats, request, principal=principal, timeout=30))


@invitations_router.get("", response_model=InvitationList, summary="The caller's pending invitations")
async def my_invitations(principal: PrincipalDep, clients: ClientsDep) -> InvitationList:
    request = billing_pb2.ListInvitationsRequest()
    reply = await call(clients.billing.ListInvitations, request, principal=principal)
    return InvitationList(invitations=[invitation_info(i) for i in reply.invitations])


@invitations_router.post(
    "/{org_id}/accept", response_model=InvitationResult, summary="Accept an invitation: become an active member"
)
async def accept_invitation(org_id: str, principal: PrincipalDep, clients: ClientsDep) -> InvitationResult:
    request = billing_pb2.AnswerInvitationRequest(org_id=org_id, accept=True)
    reply = await call(clients.billing.AnswerInvitation, request, principal=principal)
    return InvitationResult(invitation=invitation_info(reply.invitation))


@invitations_router.post(
    "/{org_id}/decline",
    status_code=204,
    response_class=Response,
    response_model=None,
    summary="Decline an invitation (its seat is freed)",
)
async def decline_invitation(org_id: str, principal: PrincipalDep, clients: ClientsDep) -> Response:
    request = billing_pb2.AnswerInvitationRequest(org_id=org_id, accept=False)
    await call(clients.billing.AnswerInvitation, request, principal=principal)
    return Response(status_code=204)
