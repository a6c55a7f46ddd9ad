"""The client's retry rules against a real loopback HTTP server (no waiting: sleep is recorded)."""

from __future__ import annotations

from typing import Any

import pytest

from services.client import ApiError, AsyncClient, Client, Wait, api
from tests.clients.scripted_server import Answer, Script, serve

REPO = "/v1/repositories/r1"
OK_STATUS = {"repository_id": "r1", "state": "ready", "head_sha": "abc"}
ERROR_500 = {"error": "boom", "code": "internal_error", "details": {}}
RATE = {"error": "slow down", "code": "rate_limited", "details": {}}


def client(url: str, slept: list[float], **kw: Any) -> Client:
    return Client(url, "crp_test", sleep=slept.append, **kw)


def test_5xx_backs_off_exponentially_then_succeeds() -> None:
    script = Script({f"{REPO}/index/status": [Answer(500, ERROR_500), Answer(503, ERROR_500), Answer(200, OK_STATUS)]})
    slept: list[float] = []
    with serve(script) as url, client(url, slept) as c:
        status = c.send(api.index_status("r1"))
    assert status.state == "ready"
    assert slept == [0.5, 1.0]
    assert [s[2] for s in script.seen] == ["Bearer crp_test"] * 3


def test_5xx_gives_up_after_three_attempts_with_the_error_body() -> None:
    script = Script({f"{REPO}/index/status": [Answer(500, ERROR_500)]})
    slept: list[float] = []
    with serve(script) as url, client(url, slept) as c, pytest.raises(ApiError) as caught:
        c.send(api.index_status("r1"))
    assert len(script.seen) == 3
    assert slept == [0.5, 1.0]
    assert (caught.value.status, caught.value.code, caught.value.error) == (500, "internal_error", "boom")


def test_429_waits_retry_after_when_given_and_30_s_without() -> None:
    answers = [Answer(429, RATE, {"Retry-After": "7"}), Answer(429, RATE), Answer(200, OK_STATUS)]
    script = Script({f"{REPO}/index/status": answers})
    slept: list[float] = []
    with serve(script) as url, client(url, slept) as c:
        assert c.send(api.index_status("r1")).head_sha == "abc"
    assert slept == [7.0, 30.0]


def test_a_429_that_is_not_a_rate_limit_is_raised_at_once() -> None:
    """A usage cap resets at the end of the period: its Retry-After is days, never to be slept."""
    quota = {"error": "the monthly analysis cap is reached", "code": "quota_exceeded", "details": {"cap": 200}}
    script = Script({f"{REPO}/analyze": [Answer(429, quota, {"Retry-After": "401537"})]})
    slept: list[float] = []
    with serve(script) as url, client(url, slept) as c, pytest.raises(ApiError) as caught:
        c.send(api.analyze("r1", "a.py", "x = 1\n"))
    assert (caught.value.status, caught.value.code) == (429, "quota_exceeded")
    assert caught.value.details == {"cap": 200}
    assert slept == []
    assert len(script.seen) == 1


def test_a_rate_limit_longer_than_the_cap_is_not_waited_out() -> None:
    script = Script({f"{REPO}/index/status": [Answer(429, RATE, {"Retry-After": "3600"}), Answer(200, OK_STATUS)]})
    slept: list[float] = []
    with serve(script) as url, client(url, slept) as c, pytest.raises(ApiError) as caught:
        c.send(api.index_status("r1"))
    assert caught.value.code == "rate_limited"
    assert slept == []
    assert len(script.seen) == 1


def test_every_wait_is_announced_with_what_it_waits_for() -> None:
    answers = [Answer(503, ERROR_500), Answer(429, RATE, {"Retry-After": "2"}), Answer(200, OK_STATUS)]
    script = Script({f"{REPO}/index/status": answers})
    slept: list[float] = []
    said: list[Wait] = []
    with serve(script) as url, client(url, slept, on_wait=said.append) as c:
        c.send(api.index_status("r1"))
    assert slept == [0.5, 2.0]
    assert [w.seconds for w in said] == slept
    assert said[0].reason == "server error (503 internal_error), attempt 2 of 3"
    assert said[1].reason == "rate limited (429 rate_limited), try 2 of 6"


def test_waiting_for_an_index_starts_none_by_default() -> None:
    script = Script(
        {
            f"{REPO}/index_repo": [Answer(202, {"repository_id": "r1", "state": "queued"})],
            f"{REPO}/index/status": [
                Answer(200, {"repository_id": "r1", "state": "indexing", "files_done": 1, "files_total": 2}),
                Answer(200, OK_STATUS),
            ],
        }
    )
    with serve(script) as url, client(url, []) as c:
        assert c.wait_for_index("r1").state == "ready"
    assert [p for _, p, _ in script.seen] == [f"{REPO}/index/status"] * 2


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, "no_files"), (401, "invalid_token"), (404, "repo_not_found"), (422, "validation_failed")],
)
def test_other_4xx_are_never_retried(status: int, code: str) -> None:
    body = {"error": "no", "code": code, "details": {"field": "path"}}
    script = Script({f"{REPO}/analyze": [Answer(status, body), Answer(200, {"findings": []})]})
    slept: list[float] = []
    with serve(script) as url, client(url, slept) as c, pytest.raises(ApiError) as caught:
        c.send(api.analyze("r1", "a.py", "x = 1\n"))
    assert len(script.seen) == 1
    assert slept == []
    assert caught.value.body() == body
    assert caught.value.status == status


def test_index_in_progress_polls_status_instead_of_triggering_again() -> None:
    busy = {"error": "an index is running", "code": "index_in_progress", "details": {"run_id": "run1"}}
    script = Script(
        {
            f"{REPO}/index_repo": [Answer(409, busy)],
            f"{REPO}/index/status": [
                Answer(200, {"repository_id": "r1", "state": "indexing", "files_done": 3, "files_total": 9}),
                Answer(200, {"repository_id": "r1", "state": "indexing", "files_done": "9", "files_total": 9.0}),
                Answer(200, OK_STATUS),
            ],
        }
    )
    slept: list[float] = []
    seen: list[tuple[str, int]] = []
    with serve(script) as url, client(url, slept) as c:
        final = c.wait_for_index(
            "r1", trigger=True, poll_interval=2, on_progress=lambda s: seen.append((s.state, s.files_done))
        )
    assert final.state == "ready"
    assert final.head_sha == "abc"
    assert [(m, p) for m, p, _ in script.seen] == [
        ("POST", f"{REPO}/index_repo"),
        ("GET", f"{REPO}/index/status"),
        ("GET", f"{REPO}/index/status"),
        ("GET", f"{REPO}/index/status"),
    ]
    assert seen == [("indexing", 3), ("indexing", 9), ("ready", 0)]
    assert slept == [2, 2]


def test_index_wait_times_out_on_the_injected_clock() -> None:
    script = Script(
        {
            f"{REPO}/index_repo": [Answer(202, {"repository_id": "r1", "state": "queued"})],
            f"{REPO}/index/status": [Answer(200, {"repository_id": "r1", "state": "queued"})],
        }
    )
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    clock = lambda: now[0]  # noqa: E731
    with serve(script) as url, Client(url, "t", sleep=sleep, clock=clock) as c, pytest.raises(ApiError) as caught:
        c.wait_for_index("r1", trigger=True, poll_interval=5, timeout=20)
    assert caught.value.code == "timeout"
    assert now[0] == 20


def test_unreachable_server_is_an_api_error_after_the_5xx_attempts() -> None:
    slept: list[float] = []
    with Client("http://127.0.0.1:9", "t", sleep=slept.append) as c, pytest.raises(ApiError) as caught:
        c.send(api.validate())
    assert caught.value.code == "service_unavailable"
    assert caught.value.status == 0
    assert slept == [0.5, 1.0]


async def test_async_client_follows_the_same_rules() -> None:
    busy = {"error": "running", "code": "index_in_progress", "details": {}}
    script = Script(
        {
            f"{REPO}/index_repo": [Answer(500, ERROR_500), Answer(429, RATE, {"Retry-After": "2"}), Answer(409, busy)],
            f"{REPO}/index/status": [Answer(200, OK_STATUS)],
        }
    )
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    with serve(script) as url:
        async with AsyncClient(url, "t", sleep=sleep) as c:
            final = await c.wait_for_index("r1", trigger=True)
    assert final.state == "ready"
    assert slept == [0.5, 2.0]
    assert [p for _, p, _ in script.seen] == [f"{REPO}/index_repo"] * 3 + [f"{REPO}/index/status"]
