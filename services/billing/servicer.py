"""gRPC transport of the billing service: read the request, call one use case, convert. The use
case opens its unit of work (docs/architecture.md); nothing here touches the database."""

from __future__ import annotations

from typing import TypeAlias

import grpc

from services.billing import identity, payment_events, ratelimit, signin, subscriptions, teams, usage
from services.billing.access import caller, may_access
from services.billing.deps import BillingDeps
from services.contracts.v1 import billing_pb2, billing_pb2_grpc
from services.kit.errors import ServiceError
from services.kit.identity import user_principal

Ctx: TypeAlias = grpc.aio.ServicerContext


class BillingServicer(billing_pb2_grpc.BillingServiceServicer):
    def __init__(self, deps: BillingDeps) -> None:
        self.deps = deps
        self.db = deps.db

    # --- identity ------------------------------------------------------------------------

    async def ValidateToken(
        self, request: billing_pb2.ValidateTokenRequest, context: Ctx
    ) -> billing_pb2.ValidateTokenResponse:
        found = await identity.authenticate(self.deps, request.token, request.client_ip, request.org_id, request.meter)
        return billing_pb2.ValidateTokenResponse(principal=found.principal, expires_at=found.expires_at)

    async def CreateUser(self, request: billing_pb2.CreateUserRequest, context: Ctx) -> billing_pb2.CreateUserResponse:
        user, org, raw = await identity.create_user(
            self.db, request.login, request.email, request.org_name, request.org_role, request.token_name
        )
        self.deps.wake()  # the use cases that stage events take the db only; the relay is woken here
        return billing_pb2.CreateUserResponse(user_id=user.id, org_id=org.id if org else "", token=raw)

    async def StartHostSignIn(
        self, request: billing_pb2.StartHostSignInRequest, context: Ctx
    ) -> billing_pb2.StartHostSignInResponse:
        return await signin.start(self.deps, request.client_ip, request.redirect_uri)

    async def SignInWithHost(
        self, request: billing_pb2.SignInWithHostRequest, context: Ctx
    ) -> billing_pb2.SignInResponse:
        return await signin.complete(self.deps, request.client_ip, request.code, request.state)

    async def SignOut(self, request: billing_pb2.SignOutRequest, context: Ctx) -> billing_pb2.SignOutResponse:
        await identity.sign_out(self.db, caller().user_id, request.token)
        self.deps.wake()
        return billing_pb2.SignOutResponse()

    async def CreatePersonalToken(
        self, request: billing_pb2.CreatePersonalTokenRequest, context: Ctx
    ) -> billing_pb2.CreatePersonalTokenResponse:
        token, raw = await identity.create_personal_token(
            self.db, caller().user_id, request.name, request.expires_in_days, self.deps.settings.max_personal_tokens
        )
        return billing_pb2.CreatePersonalTokenResponse(token=identity.token_message(token), secret=raw)

    async def ListPersonalTokens(
        self, request: billing_pb2.ListPersonalTokensRequest, context: Ctx
    ) -> billing_pb2.ListPersonalTokensResponse:
        found = await identity.list_personal_tokens(self.db, caller().user_id)
        return billing_pb2.ListPersonalTokensResponse(tokens=[identity.token_message(t) for t in found])

    async def RevokePersonalToken(
        self, request: billing_pb2.RevokePersonalTokenRequest, context: Ctx
    ) -> billing_pb2.RevokePersonalTokenResponse:
        await identity.revoke_personal_token(self.db, caller().user_id, request.token_id)
        self.deps.wake()
        return billing_pb2.RevokePersonalTokenResponse()

    async def CheckAccess(
        self, request: billing_pb2.CheckAccessRequest, context: Ctx
    ) -> billing_pb2.CheckAccessResponse:
        return billing_pb2.CheckAccessResponse(allowed=may_access(request.owner, request.min_role))

    # --- teams ---------------------------------------------------------------------------

    async def ListMembers(
        self, request: billing_pb2.ListMembersRequest, context: Ctx
    ) -> billing_pb2.ListMembersResponse:
        return await teams.list_members(self.db, caller(), request.org_id)

    async def InviteMember(self, request: billing_pb2.InviteMemberRequest, context: Ctx) -> billing_pb2.MemberResponse:
        member = await teams.invite(self.db, caller(), request.org_id, request.login, request.email, request.role)
        return billing_pb2.MemberResponse(member=member)

    async def ListInvitations(
        self, request: billing_pb2.ListInvitationsRequest, context: Ctx
    ) -> billing_pb2.ListInvitationsResponse:
        return await teams.invitations(self.db, caller())

    async def AnswerInvitation(
        self, request: billing_pb2.AnswerInvitationRequest, context: Ctx
    ) -> billing_pb2.InvitationResponse:
        answer = await teams.answer_invitation(self.db, caller(), request.org_id, request.accept)
        self.deps.wake()
        return billing_pb2.InvitationResponse(invitation=answer)

    async def RemoveMember(
        self, request: billing_pb2.RemoveMemberRequest, context: Ctx
    ) -> billing_pb2.RemoveMemberResponse:
        await teams.remove(self.db, caller(), request.org_id, request.member_id)
        self.deps.wake()
        return billing_pb2.RemoveMemberResponse()

    async def ChangeMemberRole(
        self, request: billing_pb2.ChangeMemberRoleRequest, context: Ctx
    ) -> billing_pb2.MemberResponse:
        member = await teams.change_role(self.db, caller(), request.org_id, request.member_id, request.role)
        self.deps.wake()
        return billing_pb2.MemberResponse(member=member)

    async def ChangeSeats(
        self, request: billing_pb2.ChangeSeatsRequest, context: Ctx
    ) -> billing_pb2.SubscriptionResponse:
        subscription = await subscriptions.change_seats(self.deps, caller(), request.org_id, request.seats)
        return billing_pb2.SubscriptionResponse(subscription=subscription)

    # --- plans and subscriptions ----------------------------------------------------------

    async def ListPlans(self, request: billing_pb2.ListPlansRequest, context: Ctx) -> billing_pb2.PlanList:
        caller()
        return await subscriptions.plan_catalogue(self.deps)

    async def GetAccountStatus(self, request: billing_pb2.AccountRequest, context: Ctx) -> billing_pb2.AccountStatus:
        return await subscriptions.account_status(self.deps, caller(), request.org_id)

    async def GetUsage(self, request: billing_pb2.AccountRequest, context: Ctx) -> billing_pb2.Usage:
        return await subscriptions.usage(self.deps, caller(), request.org_id)

    async def StartCheckout(self, request: billing_pb2.CheckoutRequest, context: Ctx) -> billing_pb2.CheckoutSession:
        return await subscriptions.checkout(self.deps, caller(), request)

    async def OpenBillingPortal(self, request: billing_pb2.AccountRequest, context: Ctx) -> billing_pb2.PortalSession:
        return await subscriptions.portal(self.deps, caller(), request.org_id)

    async def SwitchPlan(
        self, request: billing_pb2.SwitchPlanRequest, context: Ctx
    ) -> billing_pb2.SubscriptionResponse:
        result = await subscriptions.switch_plan(self.deps, caller(), request.org_id, request.plan)
        return billing_pb2.SubscriptionResponse(subscription=result)

    async def CancelSubscription(
        self, request: billing_pb2.AccountRequest, context: Ctx
    ) -> billing_pb2.SubscriptionResponse:
        result = await subscriptions.cancel(self.deps, caller(), request.org_id)
        return billing_pb2.SubscriptionResponse(subscription=result)

    async def ReactivateSubscription(
        self, request: billing_pb2.AccountRequest, context: Ctx
    ) -> billing_pb2.SubscriptionResponse:
        result = await subscriptions.reactivate(self.deps, caller(), request.org_id)
        return billing_pb2.SubscriptionResponse(subscription=result)

    async def CheckQuota(self, request: billing_pb2.CheckQuotaRequest, context: Ctx) -> billing_pb2.CheckQuotaResponse:
        return await usage.check_quota(
            self.db, self.deps.catalogue, user_principal(), request.owner, request.metric, request.amount
        )

    async def RecordAiUsage(
        self, request: billing_pb2.RecordAiUsageRequest, context: Ctx
    ) -> billing_pb2.RecordAiUsageResponse:
        await usage.record_ai(self.db, caller(), request)
        return billing_pb2.RecordAiUsageResponse()

    async def HandlePaymentEvent(
        self, request: billing_pb2.PaymentEventRequest, context: Ctx
    ) -> billing_pb2.PaymentEventResponse:
        if not request.event_id:
            raise ServiceError("bad_request", "event id is required")
        return await payment_events.handle(self.deps, request.event_id, request.event_type, request.payload)

    async def HitRateLimit(self, request: billing_pb2.RateLimitRequest, context: Ctx) -> billing_pb2.RateLimitResponse:
        window = self.deps.settings.rate_limit_window_seconds
        return await ratelimit.meter(self.db, self.deps.catalogue, caller(), request.org_id, window)

    async def ReserveRateBudget(
        self, request: billing_pb2.RateBudgetRequest, context: Ctx
    ) -> billing_pb2.RateBudgetResponse:
        window = self.deps.settings.rate_limit_window_seconds
        return await ratelimit.reserve(self.db, self.deps.catalogue, caller(), request.org_id, request.want, window)
