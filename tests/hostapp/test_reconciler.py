"""The reconciler: lost or abandoned jobs go back to the queue, jobs out of attempts fail,
and failed deliveries we never recorded are redelivered through the REST API, once."""

from __future__ import annotations

import time

from sqlalchemy import func, select

from services.hostapp import jobs, queries
from services.hostapp.github import GitHubApp
from services.hostapp.models import now_ms, outbox
from services.hostapp.reconciler import Reconciler
from services.kit.bus import SUBJECT_PR_JOB
from services.kit.db import Database
from tests.hostapp.conftest import all_jobs, settings_for
from tests.standins.github_api import GitHubStandIn, _iso


async def job_messages(db: Database) -> int:
    async with db.session() as session:
        return int(
            (await session.execute(select(func.count()).where(outbox.c.subject == SUBJECT_PR_JOB))).scalar() or 0
        )


async def make_job(db: Database, head: str, **state: object) -> str:
    async with db.session() as session:
        enqueued = await jobs.enqueue(session, 1, "acme/app", 7, head, "d")
        await queries.update_job(session, enqueued.job_id, **state)
    return enqueued.job_id


async def test_lost_abandoned_and_exhausted_jobs(db: Database, standin: GitHubStandIn) -> None:
    settings = settings_for(standin, requeue_after_seconds=60, index_wait_seconds=3600, job_max_deliver=3)
    old = now_ms() - 120_000
    lost = await make_job(db, "a" * 40, updated_at=old)  # queued, its message gone
    fresh = await make_job(db, "b" * 40)  # queued just now: left alone
    dead = await make_job(db, "c" * 40, state="running", attempts=1, lease_until=now_ms() - 1)
    alive = await make_job(db, "d" * 40, state="running", attempts=1, lease_until=now_ms() + 60_000)
    exhausted = await make_job(db, "e" * 40, state="running", attempts=3, lease_until=now_ms() - 1)
    overdue = await make_job(db, "f" * 40, state="waiting_index", waiting_since=now_ms() - 7_200_000)
    waiting = await make_job(db, "0" * 40, state="waiting_index", waiting_since=now_ms())
    before = await job_messages(db)

    counts = await Reconciler(db, GitHubApp(settings), settings).reconcile_jobs()
    assert counts == {"requeued": 3, "failed": 1}
    states = {j.id: j.state for j in await all_jobs(db)}
    assert states == {
        lost: "queued",
        fresh: "queued",
        dead: "queued",
        alive: "running",
        exhausted: "failed",
        overdue: "queued",  # the worker sees it waited too long and closes it
        waiting: "waiting_index",
    }
    assert await job_messages(db) == before + 3


async def test_failed_deliveries_are_redelivered_once(db: Database, standin: GitHubStandIn) -> None:
    now = time.time()

    def delivery(id_: int, guid: str, status: int, age: float = 60, redelivery: bool = False) -> dict[str, object]:
        return {
            "id": id_,
            "guid": guid,
            "status_code": status,
            "status": "OK" if status < 300 else "Internal Server Error",
            "delivered_at": _iso(now - age),
            "redelivery": redelivery,
            "event": "pull_request",
            "action": "opened",
        }

    standin.hook_deliveries = [
        delivery(1, "ok", 200),
        delivery(2, "failed", 502),
        delivery(3, "recorded", 500),  # we committed it, the answer was lost
        delivery(4, "healed", 503),
        delivery(5, "healed", 200, redelivery=True),
        delivery(6, "ancient", 500, age=30 * 86400),
    ]
    async with db.session() as session:
        await queries.record_delivery(session, "recorded", "pull_request", "opened", 1)
    settings = settings_for(standin)
    reconciler = Reconciler(db, GitHubApp(settings), settings)
    assert await reconciler.redeliver_failed() == 1
    assert [c.path for c in standin.calls_to("POST", r"/app/hook/deliveries/\d+/attempts")] == [
        "/app/hook/deliveries/2/attempts"
    ]
    assert await reconciler.redeliver_failed() == 0  # asked once is enough
    assert len(standin.calls_to("POST", r"/app/hook/deliveries/\d+/attempts")) == 1
    (listing,) = standin.calls_to("GET", "/app/hook/deliveries")[:1]
    assert listing.headers["authorization"].startswith("Bearer ")  # as the app, not an installation
