"""Token validation over a real gRPC round trip, with errors carried in the error detail."""

from __future__ import annotations

import pytest

from services.billing.servicer import BillingServicer
from services.contracts.v1 import billing_pb2, billing_pb2_grpc
from services.kit.errors import ServiceError
from services.kit.grpc_client import call, make_channel
from services.kit.grpc_server import GrpcServer


@pytest.fixture
async def billing_stub(make_db):
    db = make_db("billing")
    server = GrpcServer("billing", "127.0.0.1:0")
    server.add(billing_pb2_grpc.add_BillingServiceServicer_to_server, BillingServicer(db), "BillingService")
    port = await server.start()
    channel = make_channel(f"127.0.0.1:{port}", "services.contracts.v1.BillingService", ["ValidateToken"])
    yield billing_pb2_grpc.BillingServiceStub(channel)
    await channel.close()
    await server.server.stop(0)


async def test_created_user_token_validates_to_a_principal(billing_stub) -> None:
    created = await call(
        billing_stub.CreateUser, billing_pb2.CreateUserRequest(login="ada", org_name="analytical", org_role="member")
    )
    assert created.token.startswith("crp_")
    reply = await call(billing_stub.ValidateToken, billing_pb2.ValidateTokenRequest(token=created.token))
    assert reply.principal.login == "ada"
    assert reply.principal.user_id == created.user_id
    assert [(m.org_name, m.role) for m in reply.principal.memberships] == [("analytical", "member")]


@pytest.mark.parametrize(
    ("token", "code"),
    [
        ("", "not_authenticated"),
        ("bogus", "invalid_token"),
        ("crp_" + "a" * 36, "invalid_token"),
    ],
)
async def test_bad_tokens_map_to_spec_codes(billing_stub, token: str, code: str) -> None:
    with pytest.raises(ServiceError) as err:
        await call(billing_stub.ValidateToken, billing_pb2.ValidateTokenRequest(token=token))
    assert err.value.code == code
    assert err.value.http_status == 401


async def test_unknown_well_formed_token_is_invalid(billing_stub) -> None:
    from services.kit import tokens

    with pytest.raises(ServiceError) as err:
        await call(billing_stub.ValidateToken, billing_pb2.ValidateTokenRequest(token=tokens.generate("crp")))
    assert err.value.code == "invalid_token"


async def test_validation_error_details_cross_the_boundary(billing_stub) -> None:
    with pytest.raises(ServiceError) as err:
        await call(billing_stub.CreateUser, billing_pb2.CreateUserRequest(login="x", org_name="o", org_role="god"))
    assert err.value.code == "validation_failed"
    assert err.value.details == {"field": "org_role"}
