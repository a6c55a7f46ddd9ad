"""NATS and PostgreSQL go away and come back, idle and in the middle of an index (issue 10,
finding 1: after such an outage every later index stayed queued for good, /readyz said ready).
After each: /readyz said 503 during the outage, every run is terminal within JOB_BOUND, the next
job is processed, and every event was applied once by each consumer."""

from __future__ import annotations

import pytest

from tests.faults.conftest import JOB_BOUND, OUTAGE_SEEN_BOUND, READY_BOUND, World

pytestmark = [pytest.mark.faults, pytest.mark.timeout(300)]


def test_nats_stopped_and_restarted_while_idle(world: World) -> None:
    repo = world.new_repo("nats-idle", 20)
    world.index(repo)
    world.stop_nats()
    try:
        world.wait_readyz(503, OUTAGE_SEEN_BOUND)
    finally:
        world.start_nats()
    world.wait_readyz(200, READY_BOUND)
    world.index(repo)
    world.assert_settled()


def test_an_index_that_finishes_while_nats_is_down(world: World) -> None:
    repo = world.new_repo("nats-mid", 600)
    world.trigger(repo)
    world.wait_state(repo, ("indexing",), JOB_BOUND)
    mark = world.log_mark("indexer")
    # Frozen while NATS goes down: on a quiet machine the 600 files could otherwise be indexed
    # and acknowledged before the server has stopped, and the test would see no outage at all.
    with world.frozen("indexer"):
        world.stop_nats()
    try:
        world.wait_readyz(503, OUTAGE_SEEN_BOUND)
        # The run completes (the database is up); acknowledging its job cannot, and that
        # failure is the one that used to end the worker's loop without a word.
        world.wait_state(repo, ("ready", "failed"), JOB_BOUND)
        world.wait_log("indexer", "consumer indexer-jobs: message not handled", mark, JOB_BOUND)
    finally:
        world.start_nats()
    world.wait_readyz(200, READY_BOUND)
    world.index(world.new_repo("nats-after", 20))  # the next job is taken: it used to stay queued
    world.assert_settled()


def test_postgres_restarted_while_an_index_runs(world: World) -> None:
    repo = world.new_repo("pg-mid", 600)
    world.trigger(repo)
    world.wait_state(repo, ("indexing",), JOB_BOUND)
    world.stop_pg()
    try:
        world.wait_readyz(503, OUTAGE_SEEN_BOUND)
    finally:
        world.start_pg()
    world.wait_readyz(200, READY_BOUND)
    world.wait_state(repo, ("ready", "failed"), JOB_BOUND)
    world.index(world.new_repo("pg-after", 20))
    world.index(repo)  # the repository that was interrupted indexes again too
    world.assert_settled()
