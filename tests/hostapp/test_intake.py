"""Record, acknowledge, apply after: deliveries answered together share a statement and each
caller learns whether its own was new; a delivery recorded but never applied (the process died
after answering) is applied by the next processor, once, even with two of them at work."""

from __future__ import annotations

import asyncio

import orjson

from services.hostapp.deliveries import DeliveryProcessor
from services.hostapp.intake import Intake
from services.hostapp.models import WebhookDelivery
from services.kit.db import Database
from tests.hostapp.conftest import all_jobs, deliveries, payload, raw, records


def opened(number: int) -> bytes:
    body = payload("pull_request.opened")
    body["number"] = body["pull_request"]["number"] = number
    body["pull_request"]["head"]["sha"] = f"{number:040x}"
    return orjson.dumps(body)


async def test_concurrent_deliveries_are_each_answered_for_their_own_record(db: Database) -> None:
    woken: list[int] = []
    intake = Intake(db, wake=lambda: woken.append(1), max_batch=7)
    ids = [f"d-{n % 40}" for n in range(60)]  # 40 ids, 20 of them sent twice, some in one statement
    receipts = await asyncio.gather(*(intake.receive(i, "pull_request", opened(int(i[2:]) + 1)) for i in ids))
    new = [i for i, r in zip(ids, receipts, strict=True) if not r.duplicate]
    assert sorted(new) == sorted(set(ids))  # each id answered "new" exactly once
    stored = await deliveries(db)
    assert set(stored) == set(ids)
    assert all(d.processed_at is None and d.payload for d in stored.values())  # recorded, not applied
    assert await all_jobs(db) == []  # nothing applied in the request path
    assert len(woken) == 40


async def test_a_delivery_recorded_before_a_crash_is_applied_after_it(db: Database) -> None:
    await Intake(db).receive("before-crash", "installation", raw("installation.created"))
    # The process that answered died here. A new one's processor finds the delivery:
    outcomes = await DeliveryProcessor(db).process_pending()
    assert outcomes["before-crash"].handled
    assert await records(db) == {(957387, "Codertocat/Hello-World"): "active"}
    recorded = (await deliveries(db))["before-crash"]
    assert recorded.processed_at is not None
    assert recorded.payload is None
    assert recorded.outcome.startswith("installation created")
    assert await DeliveryProcessor(db).process_pending() == {}  # applied once
    # Its redelivery is recorded as a duplicate and applied no more.
    assert (await Intake(db).receive("before-crash", "installation", raw("installation.created"))).duplicate


async def test_two_processors_apply_each_delivery_once(db: Database) -> None:
    intake = Intake(db)
    for n in range(1, 31):
        await intake.receive(f"pr-{n}", "pull_request", opened(n))
    first, second = DeliveryProcessor(db, batch=4), DeliveryProcessor(db, batch=4)

    async def drain(processor: DeliveryProcessor) -> list[str]:
        applied: list[str] = []
        while outcomes := await processor.process_pending():
            applied += outcomes
        return applied

    a, b = await asyncio.gather(drain(first), drain(second))
    assert sorted(a + b) == sorted(f"pr-{n}" for n in range(1, 31))
    assert not set(a) & set(b)
    jobs = await all_jobs(db)
    assert sorted(j.pr_number for j in jobs) == list(range(1, 31))
    stored = await deliveries(db)
    assert {d.job_id for d in stored.values()} == {j.id for j in jobs}


async def test_processed_in_arrival_order(db: Database) -> None:
    """A suspension recorded after the installation's creation leaves it suspended (the ids
    sort the other way round)."""
    suspend = payload("installation.suspend")
    suspend["installation"] = payload("installation.created")["installation"]
    intake = Intake(db)
    await intake.receive("z-created", "installation", raw("installation.created"))
    await intake.receive("a-suspend", "installation", orjson.dumps(suspend))
    outcomes = await DeliveryProcessor(db).process_pending()
    assert list(outcomes) == ["z-created", "a-suspend"]
    assert await records(db) == {(957387, "Codertocat/Hello-World"): "suspended"}


async def test_a_backlog_drains_while_deliveries_keep_arriving(db: Database) -> None:
    """Busy intake: the processor pauses between batches, and still takes one each pause."""
    intake = Intake(db)
    for n in range(1, 251):
        await intake.receive(f"busy-{n}", "pull_request", opened(n))
    processor = DeliveryProcessor(db, batch=100, busy=lambda: True, busy_pause=0.05)
    task = asyncio.create_task(processor.run())
    try:
        deadline = asyncio.get_running_loop().time() + 30
        while len(await all_jobs(db)) < 250:
            assert asyncio.get_running_loop().time() < deadline, "the backlog did not drain"
            await asyncio.sleep(0.1)
    finally:
        processor.stop()
        await asyncio.wait_for(task, 10)
    assert all(d.processed_at for d in (await deliveries(db)).values())


async def test_a_delivery_whose_effect_fails_is_stored_failed_and_holds_back_nothing(db: Database) -> None:
    """A recorded payload the rules cannot apply (here a repository name that is an object,
    which the database refuses; the intake's checks refuse it, so it is written as a row
    recorded before them would be) is rolled back alone and stored ``failed: …``; the
    deliveries before and after it in the same batch are applied."""
    broken = payload("installation.created")
    broken["installation"]["id"] = 4242
    broken["repositories"] = [{"id": 1, "full_name": {"not": "a name"}}]
    intake = Intake(db)
    await intake.receive("before", "pull_request", opened(1))
    async with db.session() as session:
        session.add(WebhookDelivery(delivery_id="broken", event="installation", payload=orjson.dumps(broken)))
    await intake.receive("after", "installation", raw("installation.created"))
    outcomes = await DeliveryProcessor(db).process_pending()
    assert list(outcomes) == ["before", "broken", "after"]
    stored = await deliveries(db)
    assert stored["broken"].outcome.startswith("failed: ")
    assert stored["broken"].processed_at is not None
    assert stored["before"].job_id
    assert stored["after"].handled
    assert await records(db) == {(957387, "Codertocat/Hello-World"): "active"}  # nothing of 4242
