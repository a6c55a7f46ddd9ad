"""Indexing's done-when, through the real gateway and service processes: register a local
repository with history, index it, read what the index says, refuse a second trigger,
survive the indexer being killed mid-index, and re-read only changed files incrementally."""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from services.contracts.v1 import common_pb2, indexer_pb2, indexer_pb2_grpc
from services.kit.grpc_client import call, make_channel
from tests.e2e.conftest import admin_token
from tests.e2e.harness import RunningSystem
from tests.indexer.support import commit, git, init_repo, sample_repo, write

pytestmark = pytest.mark.e2e


def assert_error(reply: httpx.Response, status: int, code: str) -> dict:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert set(body) == {"error", "code", "details"}
    assert body["code"] == code
    return body


@pytest.fixture
def auth(system: RunningSystem, request: pytest.FixtureRequest) -> dict[str, str]:
    # One user per test: each token has its own rate-limit budget for the status polling.
    login = "idx-" + request.node.name.removeprefix("test_")[:30].replace("_", "-")
    return {"Authorization": f"Bearer {admin_token(system, login, org='indexers')}"}


def assert_times(body: dict, *names: str) -> None:
    """Times are RFC 3339 UTC strings (#12), never Unix numbers."""
    for name in names:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", body[name]), (name, body[name])


def repos_dir(system: RunningSystem) -> Path:
    return system.work / "repos"  # type: ignore[attr-defined]


def register(http: httpx.Client, auth: dict[str, str], path: Path) -> str:
    reply = http.post("/v1/repositories", json={"path": str(path)}, headers=auth)
    assert reply.status_code == 201, reply.text
    return reply.json()["id"]


def get_status(http: httpx.Client, auth: dict[str, str], repo_id: str) -> dict:
    while True:
        reply = http.get(f"/v1/repositories/{repo_id}/index/status", headers=auth)
        if reply.status_code != 429:  # polling shares the token's rate limit with the test
            assert reply.status_code == 200, reply.text
            return reply.json()
        time.sleep(float(reply.headers.get("retry-after", "1")))


def wait_settled(http: httpx.Client, auth: dict[str, str], repo_id: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    status: dict = {}
    while time.monotonic() < deadline:
        status = get_status(http, auth, repo_id)
        if status["state"] in ("ready", "failed"):
            return status
        time.sleep(1.0)
    raise AssertionError(f"index did not settle: {status}")


def big_repo(path: Path, files: int = 3000) -> str:
    init_repo(path)
    body = "import os\n\n\ndef handler_{i}(value: int) -> int:\n    return value + {i}\n\n\nclass Model{i}:\n    pass\n"
    write(path, {f"pkg{i % 30}/module_{i}.py": body.format(i=i) * 8 for i in range(files)})
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "a large tree")
    return git(path, "rev-parse", "HEAD")


def test_index_a_local_repository_and_read_it(system: RunningSystem, http: httpx.Client, auth: dict[str, str]) -> None:
    shas = sample_repo(repos_dir(system) / "sample", commits=4)
    repo_id = register(http, auth, repos_dir(system) / "sample")
    assert_error(http.get(f"/v1/repositories/{repo_id}/domains", headers=auth), 409, "repo_not_indexed")
    reply = http.post(f"/v1/repositories/{repo_id}/index_repo", headers=auth)
    assert reply.status_code == 202, reply.text
    assert reply.json()["state"] == "queued"
    status = wait_settled(http, auth, repo_id)
    assert status["state"] == "ready", status
    assert status["head_sha"] == shas[-1]
    assert status["files_total"] == status["files_done"] == 6

    assert_times(status, "queued_at", "started_at", "finished_at")
    assert all(type(status[k]) is int for k in ("files_done", "files_total", "files_parsed", "attempts"))

    domains = http.get(f"/v1/repositories/{repo_id}/domains", headers=auth).json()
    assert set(domains) == {"repository_id", "commit", "total", "domains"}
    assert "app" in {d["name"] for d in domains["domains"]}
    assert set(domains["domains"][0]) == {
        "name", "path_prefix", "file_count", "test_file_count", "line_count", "languages"
    }  # fmt: skip
    segments = http.get(f"/v1/repositories/{repo_id}/segments", headers=auth).json()
    assert segments["segments"]
    assert set(segments["segments"][0]) == {"domain", "name", "path_prefix", "kind", "file_count"}
    assert segments["page"] == {"next_cursor": "", "total": len(segments["segments"])}  # total was a string
    network = http.get(f"/v1/repositories/{repo_id}/network", headers=auth).json()
    assert set(network) == {
        "repository_id", "commit", "nodes", "edges", "cycles", "domain_edges", "layer_edges", "counts", "page"
    }  # fmt: skip
    assert {"source": "app/api.py", "target": "app/models.py", "weight": 1} in network["edges"]
    assert network["counts"]["nodes"] == len(network["nodes"])
    history = http.get(f"/v1/repositories/{repo_id}/history", headers=auth).json()
    assert set(history) == {
        "repository_id", "commit", "depth", "commits", "huge_commits", "hot_spots", "cochange_pairs", "files", "page"
    }  # fmt: skip
    assert history["commits"] == 4
    assert_times(history["files"][0], "first_timestamp", "last_timestamp")
    one = http.get(f"/v1/repositories/{repo_id}/history", params={"path": "app/api.py"}, headers=auth).json()
    assert set(one) == {"repository_id", "commit", "depth", "commits", "path", "file", "cochanges", "hot_spot_rank"}
    assert one["file"]["commits"] == 4
    assert one["cochanges"][0]["target"] == "app/models.py"
    assert_error(
        http.get(f"/v1/repositories/{repo_id}/history", params={"path": "../x"}, headers=auth), 422, "validation_failed"
    )
    listing = http.get("/v1/repositories", headers=auth).json()
    assert repo_id in {r["id"] for r in listing["repositories"]}
    assert type(listing["page"]["total"]) is int
    assert_times(next(r for r in listing["repositories"] if r["id"] == repo_id), "created_at")

    # Someone else cannot see it; the owner can delete it.
    stranger = {"Authorization": f"Bearer {admin_token(system, 'indexer-stranger')}"}
    assert_error(http.get(f"/v1/repositories/{repo_id}", headers=stranger), 404, "repo_not_found")
    assert http.delete(f"/v1/repositories/{repo_id}", headers=auth).status_code == 204
    assert_error(http.get(f"/v1/repositories/{repo_id}", headers=auth), 404, "repo_not_found")


def test_bad_registrations_use_the_error_shape(system: RunningSystem, http: httpx.Client, auth: dict[str, str]) -> None:
    outside = system.work  # type: ignore[attr-defined]
    for body, reason in [
        ({"path": str(outside)}, "path_not_allowed"),
        ({"path": str(repos_dir(system) / ".." / "repos")}, "dot_dot"),
        ({"url": "https://nonexistent.invalid/x.git"}, "unresolvable_host"),
    ]:
        error = assert_error(http.post("/v1/repositories", json=body, headers=auth), 422, "validation_failed")
        assert error["details"]["reason"] == reason, body
    # Not the shape of a clone URL or of a local path: refused by the document's schema at the edge
    # (the indexer refuses them too: tests/indexer/test_git_input.py).
    for body in [{"url": "ext::sh -c id"}, {"url": "file:///etc/passwd"}, {"url": "--upload-pack=id"}, {"path": "x"}]:
        error = assert_error(http.post("/v1/repositories", json=body, headers=auth), 422, "validation_failed")
        assert error["details"]["field"] in ("url", "path"), body
    not_repo = repos_dir(system) / "not-a-repo"
    not_repo.mkdir()
    error = assert_error(
        http.post("/v1/repositories", json={"path": str(not_repo)}, headers=auth), 422, "validation_failed"
    )
    assert error["details"]["reason"] == "not_a_repository"
    reply = http.post("/v1/repositories/host_index", json={"full_name": "acme/widgets"}, headers=auth)
    assert reply.status_code in (501, 404, 502), reply.text  # hostapp cannot issue credentials (yet)
    assert reply.json()["code"] in ("not_implemented", "repo_not_found", "upstream_error")


def test_account_status_counts_the_repositories_against_the_cap(
    system: RunningSystem, http: httpx.Client, auth: dict[str, str]
) -> None:
    # The e2e catalogue's free plan allows 1000 (tests/standins/accounts.py); the refusal of
    # one too many is tests/billing/test_repository_cap.py's.
    def status() -> dict:
        reply = http.get("/v1/account/status", headers=auth)
        assert reply.status_code == 200, reply.text
        return reply.json()["usage"]["repositories"]

    assert status() == {"used": 0, "cap": 1000, "remaining": 1000}
    for i in range(2):
        path = init_repo(repos_dir(system) / f"counted-{i}")
        commit(path, {"a.py": "x = 1\n"}, "one")
        register(http, auth, path)
    assert status() == {"used": 2, "cap": 1000, "remaining": 998}


def test_second_trigger_conflicts_and_a_killed_indexer_never_leaves_it_stuck(
    system: RunningSystem, http: httpx.Client, auth: dict[str, str]
) -> None:
    head = big_repo(repos_dir(system) / "big")
    repo_id = register(http, auth, repos_dir(system) / "big")
    assert http.post(f"/v1/repositories/{repo_id}/index_repo", headers=auth).status_code == 202
    assert_error(http.post(f"/v1/repositories/{repo_id}/index_repo", headers=auth), 409, "index_in_progress")
    deadline = time.monotonic() + 60
    state = ""
    while time.monotonic() < deadline and state != "indexing":
        state = get_status(http, auth, repo_id)["state"]
        time.sleep(0.1)
    assert state == "indexing"
    system.kill("indexer")
    system.restart("indexer")
    status = wait_settled(http, auth, repo_id, timeout=150)
    assert status["state"] in ("ready", "failed")
    if status["state"] == "ready":
        assert status["head_sha"] == head
        assert status["attempts"] >= 2
    else:  # given up: a new full index starts cleanly
        assert http.post(f"/v1/repositories/{repo_id}/index_repo", headers=auth).status_code == 202
        assert wait_settled(http, auth, repo_id)["state"] == "ready"

    # Incremental after a commit: only the changed file is read again.
    commit(repos_dir(system) / "big", {"pkg0/module_0.py": "def changed() -> None:\n    pass\n"}, "one change")
    assert http.post(f"/v1/repositories/{repo_id}/index_repo?incremental=true", headers=auth).status_code == 202
    status = wait_settled(http, auth, repo_id)
    assert status["state"] == "ready", status
    assert status["incremental"] is True
    assert status["files_parsed"] == 1
    assert status["files_total"] == 3000


# docs/accounts.md, "Cached listings": every gateway worker shows a change within this delay.
LISTING_BOUND_SECONDS = 1.0


def listed_ids(system: RunningSystem, token: str) -> set[str]:
    """One listing on a new connection (any worker may answer it)."""
    with httpx.Client(base_url=system.url, timeout=30) as fresh:
        reply = fresh.get("/v1/repositories", headers={"Authorization": f"Bearer {token}"})
    assert reply.status_code == 200, reply.text
    return {r["id"] for r in reply.json()["repositories"]}


def cache_hits(http: httpx.Client) -> float:
    text = http.get("/metrics").text
    line = next(
        (x for x in text.splitlines() if x.startswith('cr_gateway_repository_list_cache_total{outcome="hit"')), ""
    )
    return float(line.rsplit(" ", 1)[1]) if line else 0.0


def within_bound(condition: Callable[[], bool], what: str) -> None:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < LISTING_BOUND_SECONDS, what


def test_listings_follow_changes_within_the_bound(system: RunningSystem, http: httpx.Client) -> None:
    """Listings are cached per worker; a registration made behind the gateway's back (straight to
    the indexer, so no worker clears its own) shows on every worker within the bound, and a member
    removed from an organization stops seeing its repositories within the bound."""
    org = f"listing-{secrets.token_hex(3)}"
    admin = admin_token(system, f"{org}-admin", org=org)
    member = admin_token(system, f"{org}-member", org=org, role="viewer")
    who = http.get("/v1/auth/validate", headers={"Authorization": f"Bearer {admin}"}).json()
    org_id = who["memberships"][0]["org_id"]
    first = register_in(http, admin, repos_dir(system) / f"{org}-one", org_id)
    for _ in range(6):  # warm every worker's cache
        assert first in listed_ids(system, member)
    hits = cache_hits(http)
    assert {first} == listed_ids(system, member)
    assert cache_hits(http) > hits  # answered from a cache, not by the indexer

    sample_repo(repos_dir(system) / f"{org}-two", commits=1)
    principal = common_pb2.Principal(
        user_id=who["user_id"],
        login=who["login"],
        memberships=[common_pb2.Membership(org_id=org_id, org_name=org, role="team-admin")],
    )
    channel_request = indexer_pb2.CreateRepositoryRequest(path=str(repos_dir(system) / f"{org}-two"), org_id=org_id)
    second = asyncio.run(create_behind_the_gateway(system.env["CR_INDEXER_ADDR"], channel_request, principal))
    for _ in range(6):  # whichever worker answers
        within_bound(lambda: second in listed_ids(system, member), "a worker kept an old listing")

    members = http.get(f"/v1/teams/{org_id}/members", headers={"Authorization": f"Bearer {admin}"}).json()
    membership = next(m["id"] for m in members["members"] if m["login"] == f"{org}-member")
    removed = http.delete(f"/v1/teams/{org_id}/members/{membership}", headers={"Authorization": f"Bearer {admin}"})
    assert removed.status_code == 204, removed.text
    for _ in range(6):
        within_bound(
            lambda: not listed_ids(system, member), "a removed member still saw the organization's repositories"
        )


def register_in(http: httpx.Client, token: str, path: Path, org_id: str) -> str:
    sample_repo(path, commits=1)
    reply = http.post(
        "/v1/repositories", json={"path": str(path), "org_id": org_id}, headers={"Authorization": f"Bearer {token}"}
    )
    assert reply.status_code == 201, reply.text
    return str(reply.json()["id"])


async def create_behind_the_gateway(
    address: str, request: indexer_pb2.CreateRepositoryRequest, principal: common_pb2.Principal
) -> str:
    channel = make_channel(address, indexer_pb2.DESCRIPTOR.services_by_name["IndexerService"])
    try:
        stub = indexer_pb2_grpc.IndexerServiceStub(channel)
        return (await call(stub.CreateRepository, request, principal=principal)).id
    finally:
        await channel.close()
