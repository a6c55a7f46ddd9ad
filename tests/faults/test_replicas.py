"""Two processes of each worker service (indexer, analyzer, hostapp) on one machine, as the
Kubernetes shape runs them (issue 23, item 6): they share the work queues and the event
consumers, so every job is done once, none is lost, and when one replica of each is killed
(``kill -9``) in the middle of work, the other takes its work over."""

from __future__ import annotations

import socket
import time

import pytest

from tests.faults.conftest import JOB_BOUND, World

pytestmark = [pytest.mark.faults, pytest.mark.timeout(900)]

WORKERS = ("indexer", "analyzer", "hostapp")
# A replica's indexer warms its extraction pool (spawned interpreters importing the parsers)
# before it takes jobs: on two shared cores under load that has taken more than a minute.
START_BOUND = 240.0
CONSUMERS = {"indexer": "indexer-jobs", "analyzer": "analyzer-learn", "hostapp": "hostapp-repository-indexed"}


def _worker_name(world: World, key: str) -> str:
    return f"{socket.gethostname()}:{world.system.procs[key].pid}"


def _wait_ready_runs(world: World, repos: list[str]) -> dict[str, dict[str, object]]:
    runs = {}
    for repo in repos:
        runs[repo] = world.wait_state(repo, ("ready",), JOB_BOUND)
    return runs


def _workers_of(world: World, repos: list[str]) -> dict[str, str]:
    rows = world.sql(
        "indexer",
        "select p.id, r.worker from index_runs r join repositories p on p.last_run_id = r.id where p.id = any(%s)",
        repos,
    )
    return {repo: worker for repo, worker in rows}


def test_two_replicas_of_each_worker_share_work_and_take_over_a_killed_one(world: World) -> None:
    replicas = world.start_replicas(WORKERS)
    try:
        for name, durable in CONSUMERS.items():  # started, and past warming up: taking work
            world.wait_log(replicas[name], f"consumer {durable}: subscribed", 0, START_BOUND)
        first, second = (_worker_name(world, "indexer"), _worker_name(world, replicas["indexer"]))

        # Shared: jobs queued at once are spread over both indexers, each done once.
        batch = [world.new_repo(f"replicas-{i}", 150) for i in range(6)]
        for repo in batch:
            world.trigger(repo)
        _wait_ready_runs(world, batch)
        assert set(_workers_of(world, batch).values()) == {first, second}
        world.assert_settled()  # each repository.indexed applied once by the learners and by hostapp

        # Taken over: the first replica of each dies while it works; the second finishes it.
        slow = [world.new_repo(f"replicas-slow-{i}", 500) for i in range(3)]
        for repo in slow:
            world.trigger(repo)
        deadline = time.monotonic() + JOB_BOUND
        held = ""
        while not held and time.monotonic() < deadline:
            rows = world.sql(
                "indexer", "select repository_id from index_runs where state = 'indexing' and worker = %s", first
            )
            held = rows[0][0] if rows else ""
            time.sleep(0.1)
        assert held, "the first indexer never held a run"
        for name in WORKERS:
            assert world.kill9(name) == []  # no orphaned extraction workers either
        runs = _wait_ready_runs(world, slow)
        workers = _workers_of(world, slow)
        assert workers[held] == second  # taken over from the dead replica
        assert int(str(runs[held]["attempts"])) >= 2
        # The held run's event came after the kill: only the surviving analyzer and hostapp can
        # have applied it, and assert_settled checks that each did, once.
        world.assert_settled()
        assert f"learned {held} at" in world.system.log(replicas["analyzer"])
    finally:
        for key in replicas.values():
            world.stop_replica(key)
        for name in WORKERS:
            if world.system.procs[name].poll() is not None:
                world.system.start_process(name)
        world.system.wait_ready(START_BOUND)  # the restarted first indexer warms its pool again
