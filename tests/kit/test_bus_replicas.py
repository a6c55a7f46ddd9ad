"""Streams carry the configured replica count (CR_NATS_STREAM_REPLICAS: 3 on a 3-node cluster)."""

from __future__ import annotations

import pytest
from nats.js.errors import APIError

from services.kit.bus import STREAMS, Bus


async def test_streams_are_declared_with_the_configured_replicas(nats_url: str, stream_prefix: str) -> None:
    bus = Bus(nats_url, stream_prefix, replicas=1)
    await bus.connect()
    try:
        await bus.ensure_streams()
        for spec in STREAMS:
            info = await bus.js.stream_info(bus.stream_name(spec))
            assert info.config.num_replicas == 1
    finally:
        await bus.delete_streams()
        await bus.close()


async def test_more_replicas_than_servers_is_refused_not_silently_reduced(nats_url: str, stream_prefix: str) -> None:
    # The test server is a single node: asking for three copies must fail loudly at start-up.
    bus = Bus(nats_url, stream_prefix, replicas=3)
    await bus.connect()
    try:
        with pytest.raises(APIError):
            await bus.ensure_streams()
    finally:
        await bus.delete_streams()
        await bus.close()
