"""The gateway's repository-list cache: what it keeps (settled pages only, under the owners the
indexer filtered by), and that the indexer's repository events empty it in every worker, over a
real NATS server (docs/accounts.md, "Cached listings")."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from services.contracts.v1 import common_pb2, events_pb2, indexer_pb2
from services.devrun.infra import EmbeddedNats
from services.gateway.app import watch_events
from services.gateway.listings import SUBJECTS, RepositoryListCache, settled
from services.gateway.principals import PrincipalCache
from services.kit.bus import SUBJECT_REPOSITORY_CHANGED, Bus
from services.kit.outbox import envelope


def listing(*states: str) -> indexer_pb2.ListRepositoriesResponse:
    response = indexer_pb2.ListRepositoriesResponse()
    for n, state in enumerate(states):
        response.repositories.add(id=f"r{n}", owner="user:u1", index=indexer_pb2.IndexStatus(state=state))
    return response


def test_only_pages_without_a_queued_or_running_index_are_kept() -> None:
    assert settled(listing())
    assert settled(listing("", "ready", "failed"))
    assert not settled(listing("ready", "queued"))
    assert not settled(listing("indexing"))


def test_a_listing_fetched_across_an_event_is_not_kept() -> None:
    cache = RepositoryListCache(5.0, 10)
    cache.set_live(True, "test")
    key = (("user:u1",), 50, "")
    started = cache.generation  # the request reads this before asking the indexer
    cache.clear("repository.changed")  # a registration's event arrives while the indexer answers
    cache.put(key, b"{}", 0, started)
    assert cache.get(key) is None
    cache.put(key, b"{}", 0, cache.generation)
    assert cache.get(key) == b"{}"


def test_nothing_is_kept_while_not_live() -> None:
    cache = RepositoryListCache(5.0, 10)
    cache.put((("user:u1",), 50, ""), b"{}", 0, cache.generation)
    assert len(cache) == 0


async def wait_for(condition: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "condition not met"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("subject", SUBJECTS)
async def test_every_repository_event_empties_the_cache(tmp_path: Path, subject: str) -> None:
    server = EmbeddedNats(tmp_path / "nats")
    url = server.start()
    principals = PrincipalCache(60.0, 10)
    listings = RepositoryListCache(60.0, 10)
    bus = Bus(url, "TLIST")
    watching = asyncio.create_task(watch_events(bus, principals, listings, retry_seconds=0.1))
    publisher = Bus(url, "TLIST")
    try:
        await wait_for(lambda: listings.live and principals.live)
        key = (("user:u1", "org:o1"), 50, "")
        listings.put(key, b"{}", 0, listings.generation)
        principals.put("a", common_pb2.Principal(user_id="u1"), 0, principals.generation)
        await publisher.connect()
        assert publisher.nc is not None
        changed = events_pb2.RepositoryChanged(repository_id="r1", owner="org:o1", reason="registered")
        await publisher.nc.publish(
            publisher.subject(subject), envelope("repository.changed", changed).SerializeToString()
        )
        await wait_for(lambda: listings.get(key) is None)
        assert principals.get("a") is not None  # a repository event leaves principals alone
        if subject == SUBJECT_REPOSITORY_CHANGED:
            # A NATS outage empties it until the subscription is back, like the principal cache.
            listings.put(key, b"{}", 0, listings.generation)
            server.stop()
            await wait_for(lambda: not listings.live)
            assert listings.get(key) is None
            server.start()
            await wait_for(lambda: listings.live)
    finally:
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)
        await publisher.close()
        await bus.close()
        server.stop()
