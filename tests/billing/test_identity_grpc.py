"""Token validation over a real gRPC round trip, with errors carried in the error detail."""

from __future__ import annotations

import pytest

from services.contracts.v1 import billing_pb2
from services.kit import tokens
from services.kit.errors import ServiceError
from tests.billing.conftest import Billing, unique


async def test_created_user_token_validates_to_a_principal(billing: Billing) -> None:
    login, org = unique("ada"), unique("analytical")
    created = await billing.call(
        "CreateUser", billing_pb2.CreateUserRequest(login=login, org_name=org, org_role="member")
    )
    assert created.token.startswith("crp_")
    reply = await billing.call("ValidateToken", billing_pb2.ValidateTokenRequest(token=created.token))
    assert reply.principal.login == login
    assert reply.principal.user_id == created.user_id
    assert reply.principal.plan == "free"
    assert [(m.org_name, m.role) for m in reply.principal.memberships] == [(org, "member")]


@pytest.mark.parametrize(
    ("token", "code"),
    [
        ("", "not_authenticated"),
        ("bogus", "invalid_token"),
        ("crp_" + "a" * 36, "invalid_token"),
    ],
)
async def test_bad_tokens_map_to_spec_codes(billing: Billing, token: str, code: str) -> None:
    with pytest.raises(ServiceError) as err:
        await billing.call("ValidateToken", billing_pb2.ValidateTokenRequest(token=token))
    assert err.value.code == code
    assert err.value.http_status == 401


async def test_unknown_well_formed_token_is_invalid(billing: Billing) -> None:
    with pytest.raises(ServiceError) as err:
        await billing.call("ValidateToken", billing_pb2.ValidateTokenRequest(token=tokens.generate("crp")))
    assert err.value.code == "invalid_token"


async def test_validation_error_details_cross_the_boundary(billing: Billing) -> None:
    with pytest.raises(ServiceError) as err:
        await billing.call("CreateUser", billing_pb2.CreateUserRequest(login="x", org_name="o", org_role="god"))
    assert err.value.code == "validation_failed"
    assert err.value.details == {"field": "org_role"}
