"""GetCloneCredentials and GetInstallationRecord over real gRPC: the token comes from the
stand-in (cached), and a repository that is not installed, suspended or removed gets a
clear error code."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from services.contracts.v1 import hostapp_pb2, hostapp_pb2_grpc
from services.hostapp import queries
from services.hostapp.github import GitHubApp
from services.hostapp.servicer import HostAppServicer
from services.kit.db import Database
from services.kit.grpc_client import RemoteError, call, make_channel
from services.kit.grpc_server import GrpcServer
from tests.hostapp.conftest import settings_for
from tests.standins.github_api import GitHubStandIn


class Client:
    def __init__(self, stub: hostapp_pb2_grpc.HostAppServiceAsyncStub, github: GitHubApp) -> None:
        self.stub = stub
        self.github = github

    async def credentials(self, full_name: str) -> hostapp_pb2.CloneCredentials:
        return await call(self.stub.GetCloneCredentials, hostapp_pb2.CloneCredentialsRequest(full_name=full_name))

    async def error(self, full_name: str) -> RemoteError:
        with pytest.raises(RemoteError) as err:
            await self.credentials(full_name)
        return err.value


async def _serve(db: Database, github: GitHubApp) -> tuple[GrpcServer, Client]:
    server = GrpcServer("hostapp-test", "127.0.0.1:0")
    server.add(
        hostapp_pb2_grpc.add_HostAppServiceServicer_to_server,
        HostAppServicer(db, github),
        "services.contracts.v1.HostAppService",
    )
    port = await server.start()
    channel = make_channel(f"127.0.0.1:{port}", hostapp_pb2.DESCRIPTOR.services_by_name["HostAppService"])
    return server, Client(hostapp_pb2_grpc.HostAppServiceStub(channel), github)


@pytest.fixture
async def client(db: Database, standin: GitHubStandIn) -> AsyncIterator[Client]:
    async with db.session() as session:
        for installation_id, status in ((10, "active"), (20, "suspended"), (30, "active")):
            await queries.upsert_installation(
                session, installation_id, f"acct{installation_id}", "Organization", status
            )
        records: list[tuple[int, dict[str, Any], str]] = [
            (10, {"full_name": "acme/Widgets", "id": 1}, "active"),
            (20, {"full_name": "paused/app", "id": 2}, "suspended"),
            (30, {"full_name": "acme/old", "id": 3}, "removed"),
            (30, {"full_name": "refused/repo", "id": 4}, "active"),
        ]
        for installation_id, r, status in records:
            await queries.upsert_record(session, installation_id, r, status)
    standin.refused_installations.add(30)
    server, c = await _serve(db, GitHubApp(settings_for(standin)))
    yield c
    await server.server.stop(0)


async def test_active_repository_gets_a_clone_url_and_a_cached_installation_token(
    client: Client, standin: GitHubStandIn
) -> None:
    first = await client.credentials("acme/widgets")  # names are case-insensitive
    assert first.clone_url == f"http://127.0.0.1:{standin.port}/acme/Widgets.git"  # GHE: the API URL minus /api/v3
    assert first.token.startswith("ghs_")
    assert first.installation_id == 10
    assert first.expires_at > time.time() + 3000
    second = await client.credentials("acme/Widgets")
    assert second.token == first.token
    assert len(standin.calls_to("POST", "/app/installations/10/access_tokens")) == 1


@pytest.mark.parametrize(
    ("full_name", "code", "reason"),
    [
        ("nobody/home", "repo_not_found", "not_installed"),
        ("paused/app", "forbidden", "suspended"),
        ("acme/old", "repo_not_found", "removed"),
        ("refused/repo", "forbidden", "token_refused"),
        ("not-a-full-name", "bad_request", None),
    ],
)
async def test_unusable_repositories_get_a_clear_error(client: Client, full_name: str, code: str, reason: str) -> None:
    err = await client.error(full_name)
    assert err.code == code
    assert err.details.get("reason") == reason
    assert err.message


async def test_an_unconfigured_app_says_so(db: Database, standin: GitHubStandIn) -> None:
    async with db.session() as session:
        await queries.upsert_record(session, 10, {"full_name": "acme/Widgets"}, "active")
    server, client = await _serve(db, GitHubApp(settings_for(standin, app_id="", private_key="")))
    try:
        assert (await client.error("acme/Widgets")).code == "not_configured"
    finally:
        await server.server.stop(0)


async def test_installation_record_shows_the_status(client: Client) -> None:
    record = await call(
        client.stub.GetInstallationRecord, hostapp_pb2.InstallationRecordRequest(full_name="paused/app")
    )
    assert (record.installation_id, record.full_name, record.status, record.account_login) == (
        20,
        "paused/app",
        "suspended",
        "acct20",
    )
    with pytest.raises(RemoteError) as err:
        await call(client.stub.GetInstallationRecord, hostapp_pb2.InstallationRecordRequest(full_name="x/y"))
    assert err.value.code == "repo_not_found"


async def test_a_webhook_while_the_database_is_down_is_a_5xx(standin: GitHubStandIn) -> None:
    # The code host must see the delivery fail (so it can be redelivered), not a client error.
    down = Database("postgresql+psycopg://postgres@127.0.0.1:9/nowhere")
    server, client = await _serve(down, GitHubApp(settings_for(standin)))
    try:
        with pytest.raises(RemoteError) as err:
            await call(
                client.stub.HandleWebhook,
                hostapp_pb2.HostWebhookRequest(delivery_id="d1", event="ping", payload=b"{}"),
            )
        assert err.value.code == "service_unavailable"
    finally:
        await server.server.stop(0)
        await down.dispose()


async def test_concurrent_calls_each_read_their_own_answer(standin: GitHubStandIn) -> None:
    # PR jobs run at once (CR_HOSTAPP_JOB_CONCURRENCY), each GitHub call in a thread; one PyGithub
    # client shared by those threads answered a job with another pull request's head.
    github = GitHubApp(settings_for(standin))
    heads = {n: f"{n:040x}" for n in range(1, 41)}
    for n, head in heads.items():
        standin.set_pull("acme/widgets", n, head_sha=head)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads interleave as on a loaded machine
    try:
        for _ in range(5):
            pulls = await asyncio.gather(*(github.get_pull(10, "acme/widgets", n) for n in heads))
            assert {p.number: p.head_sha for p in pulls} == heads
    finally:
        sys.setswitchinterval(switch)
    # The race itself is rare (one in ~20,000 soak deliveries): what rules it out is that no
    # two threads share a client, while each thread keeps reusing its own.
    first = await asyncio.to_thread(lambda: (github._client(10), github._client(10)))
    with ThreadPoolExecutor(1) as other:
        second = other.submit(github._client, 10).result()
    assert first[0] is first[1]
    assert second is not first[0]
