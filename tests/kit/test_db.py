"""The kit's ways to the database: unit of work, single statements, hot-path reads."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from services.billing.models import outbox
from services.contracts.v1 import events_pb2
from services.kit.outbox import event_row, pending_count


async def _now_twice(session) -> tuple[object, object]:
    """now() is the start of the current transaction: equal twice only inside one transaction."""
    first = (await session.execute(text("select now()"))).scalar()
    await asyncio.sleep(0.01)
    return first, (await session.execute(text("select now()"))).scalar()


async def test_autocommit_statements_stand_alone_and_are_atomic(make_db) -> None:
    db = make_db("billing")
    row = event_row("events.x", "x", events_pb2.AnalysisCompleted())
    async with db.autocommit() as conn:
        await conn.execute(outbox.insert().values(**row))
        with pytest.raises(Exception, match="duplicate key"):
            await conn.execute(outbox.insert().values([{**row, "id": "other"}, row]))
    # Seen from another connection at once (no COMMIT needed), and the failed two-row statement
    # left nothing behind.
    assert await pending_count(db, outbox) == 1


async def test_read_session_statements_each_stand_alone(make_db) -> None:
    db = make_db("billing")
    async with db.read_session() as session:
        first, second = await _now_twice(session)
        assert second > first  # no BEGIN: every statement is its own transaction
    async with db.session() as session:
        first, second = await _now_twice(session)
        assert second == first  # a unit of work: one transaction around its statements


async def test_snapshot_session_reads_agree_while_a_writer_commits(make_db) -> None:
    """What the indexer's reads need: a repository's snapshot id, then that snapshot's document,
    with an index finishing in between (it replaced the snapshot: a 500 during a re-index)."""
    db = make_db("billing")
    row = event_row("events.x", "x", events_pb2.AnalysisCompleted())
    async with db.snapshot_session() as session:
        before = (await session.execute(text("select count(*) from outbox"))).scalar()
        async with db.autocommit() as conn:  # the writer commits between the two reads
            await conn.execute(outbox.insert().values(**row))
        assert (await session.execute(text("select count(*) from outbox"))).scalar() == before
        with pytest.raises(Exception, match="read-only"):
            await session.execute(outbox.insert().values(**{**row, "id": "other"}))
    assert await pending_count(db, outbox) == before + 1
