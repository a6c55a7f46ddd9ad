"""Personal access tokens and sign-out: shown once, stored as a hash, revoked at once."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import select, update

from services.billing.models import AccessToken
from services.contracts.v1 import billing_pb2
from services.kit import tokens
from services.kit.errors import ServiceError
from tests.billing.conftest import Billing


async def test_created_token_is_shown_once_and_stored_as_a_hash(billing: Billing) -> None:
    _, me = await billing.user()
    created = await billing.call("CreatePersonalToken", billing_pb2.CreatePersonalTokenRequest(name="ci"), me)
    assert tokens.parse(created.secret) == "crp"
    assert created.token.prefix == created.secret[:8]
    async with billing.db.session() as session:
        row = await session.get(AccessToken, created.token.id)
    assert row is not None
    assert row.digest == hashlib.sha256(created.secret.encode()).hexdigest()
    assert created.secret not in (row.digest, row.prefix, row.name)
    listed = await billing.call("ListPersonalTokens", billing_pb2.ListPersonalTokensRequest(), me)
    assert created.token.id in [t.id for t in listed.tokens]
    assert not any(hasattr(t, "secret") for t in listed.tokens)
    assert (await billing.principal(created.secret)).user_id == me.user_id


async def test_revoked_token_is_refused_at_once(billing: Billing) -> None:
    _, me = await billing.user()
    created = await billing.call("CreatePersonalToken", billing_pb2.CreatePersonalTokenRequest(name="x"), me)
    await billing.call("RevokePersonalToken", billing_pb2.RevokePersonalTokenRequest(token_id=created.token.id), me)
    with pytest.raises(ServiceError) as err:
        await billing.principal(created.secret)
    assert err.value.code == "invalid_token"
    listed = await billing.call("ListPersonalTokens", billing_pb2.ListPersonalTokensRequest(), me)
    assert created.token.id not in [t.id for t in listed.tokens]


async def test_someone_elses_token_cannot_be_revoked_or_seen(billing: Billing) -> None:
    _, alice = await billing.user()
    _, mallory = await billing.user()
    created = await billing.call("CreatePersonalToken", billing_pb2.CreatePersonalTokenRequest(name="a"), alice)
    with pytest.raises(ServiceError) as err:
        await billing.call(
            "RevokePersonalToken", billing_pb2.RevokePersonalTokenRequest(token_id=created.token.id), mallory
        )
    assert err.value.code == "not_found"
    listed = await billing.call("ListPersonalTokens", billing_pb2.ListPersonalTokensRequest(), mallory)
    assert created.token.id not in [t.id for t in listed.tokens]
    assert (await billing.principal(created.secret)).user_id == alice.user_id


async def test_expired_token_is_not_authenticated(billing: Billing) -> None:
    _, me = await billing.user()
    created = await billing.call(
        "CreatePersonalToken", billing_pb2.CreatePersonalTokenRequest(name="short", expires_in_days=1), me
    )
    assert created.token.expires_at > 0
    async with billing.db.session() as session:
        await session.execute(update(AccessToken).where(AccessToken.id == created.token.id).values(expires_at=1))
    with pytest.raises(ServiceError) as err:
        await billing.principal(created.secret)
    assert err.value.code == "not_authenticated"


async def test_sign_out_revokes_the_presented_token_only(billing: Billing) -> None:
    token, me = await billing.user()
    other = await billing.call("CreatePersonalToken", billing_pb2.CreatePersonalTokenRequest(name="keep"), me)
    await billing.call("SignOut", billing_pb2.SignOutRequest(token=token), me)
    with pytest.raises(ServiceError) as err:
        await billing.principal(token)
    assert err.value.code == "invalid_token"
    assert (await billing.principal(other.secret)).user_id == me.user_id


async def test_sign_out_refuses_a_token_of_someone_else(billing: Billing) -> None:
    victim_token, _ = await billing.user()
    _, attacker = await billing.user()
    with pytest.raises(ServiceError) as err:
        await billing.call("SignOut", billing_pb2.SignOutRequest(token=victim_token), attacker)
    assert err.value.code == "invalid_token"
    assert await billing.principal(victim_token)


async def test_token_routes_need_a_principal(billing: Billing) -> None:
    with pytest.raises(ServiceError) as err:
        await billing.call("ListPersonalTokens", billing_pb2.ListPersonalTokensRequest())
    assert err.value.code == "not_authenticated"


async def test_token_count_is_bounded(billing: Billing) -> None:
    _, me = await billing.user()
    billing.deps.settings.max_personal_tokens = 3
    try:
        for i in range(2):  # the admin-created token is the first
            await billing.call("CreatePersonalToken", billing_pb2.CreatePersonalTokenRequest(name=f"t{i}"), me)
        with pytest.raises(ServiceError) as err:
            await billing.call("CreatePersonalToken", billing_pb2.CreatePersonalTokenRequest(name="one-more"), me)
        assert err.value.code == "conflict"
    finally:
        billing.deps.settings.max_personal_tokens = 100
    async with billing.db.session() as session:
        count = len((await session.execute(select(AccessToken).where(AccessToken.user_id == me.user_id))).all())
    assert count == 3
