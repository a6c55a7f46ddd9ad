"""The gateway's principal cache: what it keeps, for how long, and that it keeps nothing while it
may be missing billing's events (a NATS outage and reconnect, on a NATS server of its own)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from services.contracts.v1 import common_pb2, events_pb2
from services.devrun.infra import EmbeddedNats
from services.gateway.app import watch_events
from services.gateway.principals import PrincipalCache
from services.kit.bus import SUBJECT_PRINCIPALS_CHANGED, Bus
from services.kit.outbox import envelope


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def principal(user_id: str, *orgs: str) -> common_pb2.Principal:
    p = common_pb2.Principal(user_id=user_id, login=user_id)
    for org in orgs:
        p.memberships.add(org_id=org, org_name=org, role="member")
    return p


def live_cache(ttl: float = 5.0, clock: Clock | None = None) -> PrincipalCache:
    cache = PrincipalCache(ttl, 100, clock or Clock())
    cache.set_live(True, "test")
    return cache


def test_an_entry_lives_for_the_ttl_and_never_past_its_token() -> None:
    clock = Clock()
    cache = live_cache(5.0, clock)
    cache.put("a", principal("u1"), 0, cache.generation)
    cache.put("b", principal("u2"), int(clock.now) + 2, cache.generation)
    clock.now += 3
    assert cache.get("a") is not None
    assert cache.get("b") is None  # the token expired before the TTL
    clock.now += 2
    assert cache.get("a") is None


def test_a_validation_that_crossed_a_drop_is_not_kept() -> None:
    cache = live_cache()
    started = cache.generation  # the request reads this before asking billing
    cache.drop_users({"u1"})  # the revocation's event arrives while billing answers
    cache.put("a", principal("u1"), 0, started)
    assert cache.get("a") is None
    cache.put("a", principal("u1"), 0, cache.generation)
    assert cache.get("a") is not None


def test_nothing_is_kept_while_not_live() -> None:
    cache = PrincipalCache(5.0, 100)
    cache.put("a", principal("u1"), 0, cache.generation)
    assert cache.get("a") is None
    assert len(cache) == 0


async def test_events_drop_the_users_and_the_members_they_name() -> None:
    cache = live_cache()
    for digest, p in {"a": principal("u1"), "b": principal("u2", "o1"), "c": principal("u3", "o2")}.items():
        cache.put(digest, p, 0, cache.generation)
    await cache.on_principals_changed(
        envelope("identity.principals_changed", events_pb2.PrincipalsChanged(user_ids=["u1"], reason="token_revoked"))
    )
    assert cache.get("a") is None
    assert cache.get("b") is not None
    await cache.on_subscription_changed(
        envelope("subscription.changed", events_pb2.SubscriptionChanged(owner="org:o1", plan="pro"))
    )
    assert cache.get("b") is None
    assert cache.get("c") is not None


async def wait_for(condition: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met"
        await asyncio.sleep(0.02)


async def test_a_nats_outage_empties_the_cache_until_the_subscription_is_back(tmp_path: Path) -> None:
    server = EmbeddedNats(tmp_path / "nats")
    url = server.start()
    cache = PrincipalCache(60.0, 100)
    bus = Bus(url, "TCACHE")
    watching = asyncio.create_task(watch_events(bus, cache, retry_seconds=0.1))
    publisher = Bus(url, "TCACHE")
    try:
        await wait_for(lambda: cache.live)
        cache.put("a", principal("u1"), 0, cache.generation)
        assert cache.get("a") is not None
        server.stop()
        await wait_for(lambda: not cache.live)
        assert cache.get("a") is None
        cache.put("a", principal("u1"), 0, cache.generation)
        assert cache.get("a") is None  # nothing is kept while events may be missed
        server.start()  # the same port: the client reconnects and subscribes again
        await wait_for(lambda: cache.live)
        cache.put("b", principal("u2"), 0, cache.generation)
        # The subscription works after the reconnect: an event still drops what it names.
        await publisher.connect()
        changed = events_pb2.PrincipalsChanged(user_ids=["u2"], reason="signed_out")
        assert publisher.nc is not None
        await publisher.nc.publish(
            publisher.subject(SUBJECT_PRINCIPALS_CHANGED),
            envelope("identity.principals_changed", changed).SerializeToString(),
        )
        await wait_for(lambda: cache.get("b") is None)
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
        await publisher.close()
        await bus.close()
        server.stop()
