"""gRPC transport of the billing service: read the request, call one rule, convert."""

from __future__ import annotations

import time
from typing import TypeAlias

import grpc

from services.billing import identity, payment_events, ratelimit, signin, subscriptions, teams, usage
from services.billing.access import caller, split_owner
from services.billing.deps import BillingDeps
from services.contracts.v1 import billing_pb2, billing_pb2_grpc
from services.kit.errors import ServiceError
from services.kit.identity import can_access_owner, owner_of_user, user_principal

Ctx: TypeAlias = grpc.aio.ServicerContext


class BillingServicer(billing_pb2_grpc.BillingServiceServicer):
    def __init__(self, deps: BillingDeps) -> None:
        self.deps = deps
        self.db = deps.db

    # --- identity ------------------------------------------------------------------------

    async def ValidateToken(
        self, request: billing_pb2.ValidateTokenRequest, context: Ctx
    ) -> billing_pb2.ValidateTokenResponse:
        # Every /v1 request comes here: single statements on an autocommit connection, and the
        # token's rate-limit window counted by the statement that validates it.
        seconds = self.deps.settings.rate_limit_window_seconds
        window = ratelimit.window_of(time.time(), seconds) if request.meter else None
        async with self.db.autocommit() as conn:
            try:
                found = await identity.validate_token(conn, request.token, self.deps.catalogue, count_window=window)
            except ServiceError as exc:
                if exc.code in ("invalid_token", "not_authenticated"):
                    # Counted only on failure: a valid token costs nothing more on the hot path.
                    await ratelimit.hit_address(
                        conn,
                        "authfail",
                        request.client_ip,
                        self.deps.settings.auth_failure_limit_per_minute,
                        seconds,
                        message="too many failed authentications from this address",
                    )
                raise
            if found.counted is not None:
                counted = {ratelimit.token_key(found.principal): found.counted}
                await ratelimit.hit(
                    conn, self.deps.catalogue, found.principal, request.org_id[:64], seconds, counted=counted
                )
        return billing_pb2.ValidateTokenResponse(principal=found.principal, expires_at=found.expires_at)

    async def CreateUser(self, request: billing_pb2.CreateUserRequest, context: Ctx) -> billing_pb2.CreateUserResponse:
        async with self.db.session() as session:
            user, org, raw = await identity.create_user(
                session, request.login, request.email, request.org_name, request.org_role, request.token_name
            )
        return billing_pb2.CreateUserResponse(user_id=user.id, org_id=org.id if org else "", token=raw)

    async def StartHostSignIn(
        self, request: billing_pb2.StartHostSignInRequest, context: Ctx
    ) -> billing_pb2.StartHostSignInResponse:
        s = self.deps.settings
        await self._meter_sign_in(request.client_ip)
        async with self.db.session() as session:
            return await signin.start(
                session, self.deps.host, request.redirect_uri, s.oauth_redirect_uri, s.oauth_state_ttl_seconds
            )

    async def SignInWithHost(
        self, request: billing_pb2.SignInWithHostRequest, context: Ctx
    ) -> billing_pb2.SignInResponse:
        lifetime = self.deps.settings.session_lifetime_hours * 3600
        await self._meter_sign_in(request.client_ip)
        return await signin.complete(
            self.db, self.deps.host, self.deps.catalogue, request.code, request.state, lifetime
        )

    async def _meter_sign_in(self, client_ip: str) -> None:
        s = self.deps.settings
        async with self.db.autocommit() as conn:
            await ratelimit.hit_address(
                conn, "signin", client_ip, s.signin_rate_limit_per_minute, s.rate_limit_window_seconds
            )

    async def SignOut(self, request: billing_pb2.SignOutRequest, context: Ctx) -> billing_pb2.SignOutResponse:
        principal = caller()
        async with self.db.session() as session:
            await identity.sign_out(session, principal.user_id, request.token)
        return billing_pb2.SignOutResponse()

    async def CreatePersonalToken(
        self, request: billing_pb2.CreatePersonalTokenRequest, context: Ctx
    ) -> billing_pb2.CreatePersonalTokenResponse:
        principal = caller()
        async with self.db.session() as session:
            token, raw = await identity.create_personal_token(
                session,
                principal.user_id,
                request.name,
                request.expires_in_days,
                self.deps.settings.max_personal_tokens,
            )
        return billing_pb2.CreatePersonalTokenResponse(token=identity.token_message(token), secret=raw)

    async def ListPersonalTokens(
        self, request: billing_pb2.ListPersonalTokensRequest, context: Ctx
    ) -> billing_pb2.ListPersonalTokensResponse:
        principal = caller()
        async with self.db.session() as session:
            found = await identity.list_personal_tokens(session, principal.user_id)
        return billing_pb2.ListPersonalTokensResponse(tokens=[identity.token_message(t) for t in found])

    async def RevokePersonalToken(
        self, request: billing_pb2.RevokePersonalTokenRequest, context: Ctx
    ) -> billing_pb2.RevokePersonalTokenResponse:
        principal = caller()
        async with self.db.session() as session:
            await identity.revoke_personal_token(session, principal.user_id, request.token_id)
        return billing_pb2.RevokePersonalTokenResponse()

    async def CheckAccess(
        self, request: billing_pb2.CheckAccessRequest, context: Ctx
    ) -> billing_pb2.CheckAccessResponse:
        split_owner(request.owner)
        allowed = can_access_owner(caller(), request.owner, request.min_role or "viewer")
        return billing_pb2.CheckAccessResponse(allowed=allowed)

    # --- teams ---------------------------------------------------------------------------

    async def ListMembers(
        self, request: billing_pb2.ListMembersRequest, context: Ctx
    ) -> billing_pb2.ListMembersResponse:
        async with self.db.session() as session:
            return await teams.list_members(session, caller(), request.org_id)

    async def InviteMember(self, request: billing_pb2.InviteMemberRequest, context: Ctx) -> billing_pb2.MemberResponse:
        async with self.db.session() as session:
            member = await teams.invite(session, caller(), request.org_id, request.login, request.email, request.role)
        return billing_pb2.MemberResponse(member=member)

    async def ListInvitations(
        self, request: billing_pb2.ListInvitationsRequest, context: Ctx
    ) -> billing_pb2.ListInvitationsResponse:
        async with self.db.session() as session:
            return await teams.invitations(session, caller())

    async def AnswerInvitation(
        self, request: billing_pb2.AnswerInvitationRequest, context: Ctx
    ) -> billing_pb2.InvitationResponse:
        async with self.db.session() as session:
            answer = await teams.answer_invitation(session, caller(), request.org_id, request.accept)
        return billing_pb2.InvitationResponse(invitation=answer)

    async def RemoveMember(
        self, request: billing_pb2.RemoveMemberRequest, context: Ctx
    ) -> billing_pb2.RemoveMemberResponse:
        async with self.db.session() as session:
            await teams.remove(session, caller(), request.org_id, request.member_id)
        return billing_pb2.RemoveMemberResponse()

    async def ChangeMemberRole(
        self, request: billing_pb2.ChangeMemberRoleRequest, context: Ctx
    ) -> billing_pb2.MemberResponse:
        async with self.db.session() as session:
            member = await teams.change_role(session, caller(), request.org_id, request.member_id, request.role)
        return billing_pb2.MemberResponse(member=member)

    async def ChangeSeats(
        self, request: billing_pb2.ChangeSeatsRequest, context: Ctx
    ) -> billing_pb2.SubscriptionResponse:
        async with self.db.session() as session:
            await teams.check_seats(session, caller(), request.org_id, request.seats)
            subscription = await subscriptions.change_seats(session, self.deps, request.org_id, request.seats)
        self.deps.wake()
        return billing_pb2.SubscriptionResponse(subscription=subscription)

    # --- plans and subscriptions ----------------------------------------------------------

    async def ListPlans(self, request: billing_pb2.ListPlansRequest, context: Ctx) -> billing_pb2.PlanList:
        caller()
        return await subscriptions.plan_catalogue(self.deps)

    async def GetAccountStatus(self, request: billing_pb2.AccountRequest, context: Ctx) -> billing_pb2.AccountStatus:
        async with self.db.session() as session:
            return await subscriptions.account_status(session, self.deps.catalogue, caller(), request.org_id)

    async def GetUsage(self, request: billing_pb2.AccountRequest, context: Ctx) -> billing_pb2.Usage:
        async with self.db.session() as session:
            return await subscriptions.usage(session, self.deps.catalogue, caller(), request.org_id)

    async def StartCheckout(self, request: billing_pb2.CheckoutRequest, context: Ctx) -> billing_pb2.CheckoutSession:
        async with self.db.session() as session:
            return await subscriptions.checkout(session, self.deps, caller(), request)

    async def OpenBillingPortal(self, request: billing_pb2.AccountRequest, context: Ctx) -> billing_pb2.PortalSession:
        async with self.db.session() as session:
            return await subscriptions.portal(session, self.deps, caller(), request.org_id)

    async def SwitchPlan(
        self, request: billing_pb2.SwitchPlanRequest, context: Ctx
    ) -> billing_pb2.SubscriptionResponse:
        async with self.db.session() as session:
            result = await subscriptions.switch_plan(session, self.deps, caller(), request.org_id, request.plan)
        self.deps.wake()
        return billing_pb2.SubscriptionResponse(subscription=result)

    async def CancelSubscription(
        self, request: billing_pb2.AccountRequest, context: Ctx
    ) -> billing_pb2.SubscriptionResponse:
        async with self.db.session() as session:
            result = await subscriptions.cancel(session, self.deps, caller(), request.org_id)
        self.deps.wake()
        return billing_pb2.SubscriptionResponse(subscription=result)

    async def ReactivateSubscription(
        self, request: billing_pb2.AccountRequest, context: Ctx
    ) -> billing_pb2.SubscriptionResponse:
        async with self.db.session() as session:
            result = await subscriptions.reactivate(session, self.deps, caller(), request.org_id)
        self.deps.wake()
        return billing_pb2.SubscriptionResponse(subscription=result)

    async def CheckQuota(self, request: billing_pb2.CheckQuotaRequest, context: Ctx) -> billing_pb2.CheckQuotaResponse:
        split_owner(request.owner)
        principal = user_principal()
        # Services call this on behalf of a user (principal in metadata) or from a worker (none).
        if principal is not None and not can_access_owner(principal, request.owner):
            raise ServiceError("forbidden", "the caller cannot act for this owner", {"owner": request.owner})
        async with self.db.session() as session:
            return await usage.check_quota(session, self.deps.catalogue, request.owner, request.metric, request.amount)

    async def RecordAiUsage(
        self, request: billing_pb2.RecordAiUsageRequest, context: Ctx
    ) -> billing_pb2.RecordAiUsageResponse:
        principal = caller()
        async with self.db.session() as session:
            await usage.record_ai(session, owner_of_user(principal.user_id), principal.user_id, request)
        return billing_pb2.RecordAiUsageResponse()

    async def HandlePaymentEvent(
        self, request: billing_pb2.PaymentEventRequest, context: Ctx
    ) -> billing_pb2.PaymentEventResponse:
        if not request.event_id:
            raise ServiceError("bad_request", "event id is required")
        return await payment_events.handle(self.deps, request.event_id, request.event_type, request.payload)

    async def HitRateLimit(self, request: billing_pb2.RateLimitRequest, context: Ctx) -> billing_pb2.RateLimitResponse:
        window = self.deps.settings.rate_limit_window_seconds
        async with self.db.session() as session:
            return await ratelimit.hit(session, self.deps.catalogue, caller(), request.org_id[:64], window)
