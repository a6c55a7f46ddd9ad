"""gRPC transport of the billing service: read the request, call one rule, convert."""

from __future__ import annotations

import grpc

from services.billing import identity
from services.contracts.v1 import billing_pb2, billing_pb2_grpc
from services.kit.db import Database


class BillingServicer(billing_pb2_grpc.BillingServiceServicer):
    def __init__(self, db: Database) -> None:
        self.db = db

    async def ValidateToken(
        self, request: billing_pb2.ValidateTokenRequest, context: grpc.aio.ServicerContext
    ) -> billing_pb2.ValidateTokenResponse:
        async with self.db.session() as session:
            principal, expires_at = await identity.validate_token(session, request.token)
        return billing_pb2.ValidateTokenResponse(principal=principal, expires_at=expires_at)

    async def CreateUser(
        self, request: billing_pb2.CreateUserRequest, context: grpc.aio.ServicerContext
    ) -> billing_pb2.CreateUserResponse:
        async with self.db.session() as session:
            user, org, raw = await identity.create_user(
                session, request.login, request.email, request.org_name, request.org_role, request.token_name
            )
        return billing_pb2.CreateUserResponse(user_id=user.id, org_id=org.id if org else "", token=raw)
