"""``kill -9`` of each service while it works, then a restart as a supervisor would do it
(issue 10, finding 2). After each: no child of the killed process is left, /readyz was not
ready while it was down, the interrupted work finishes within JOB_BOUND, the next job is
processed, and every event was applied once by each consumer."""

from __future__ import annotations

import pytest

from tests.faults.conftest import JOB_BOUND, OUTAGE_SEEN_BOUND, World

pytestmark = [pytest.mark.faults, pytest.mark.timeout(300)]


def test_kill_indexer_mid_index(world: World) -> None:
    repo = world.new_repo("kill-indexer", 600)
    world.trigger(repo)
    world.wait_state(repo, ("indexing",), JOB_BOUND)
    assert len(world.children("indexer")) >= 1  # its extraction workers
    assert world.kill9("indexer") == []  # they died with it
    world.wait_not_ready(OUTAGE_SEEN_BOUND)
    world.restart("indexer")
    run = world.wait_state(repo, ("ready", "failed"), JOB_BOUND)
    if run["state"] == "ready":
        assert run["attempts"] >= 2  # taken over after the crash, not run twice side by side
    world.index(world.new_repo("after-indexer", 20))
    world.assert_settled()


@pytest.mark.parametrize("name", ["analyzer", "hostapp", "billing", "gateway"])
def test_kill_service_during_work(world: World, name: str) -> None:
    repo = world.new_repo(f"kill-{name}", 150)
    world.index(repo)  # its repository.indexed event is now being learned from and consumed
    assert world.kill9(name) == []
    world.wait_not_ready(OUTAGE_SEEN_BOUND)
    world.restart(name)
    world.index(world.new_repo(f"after-{name}", 20))
    world.assert_settled()
