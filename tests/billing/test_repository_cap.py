"""The plan's repository cap, enforced by the indexer where a repository is created, against
the real billing service (the default catalogue: three repositories on the free plan)."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.contracts.v1 import indexer_pb2
from services.indexer.servicer import IndexerServicer
from services.indexer.sources import HostApp
from services.kit.errors import ServiceError
from tests.billing.conftest import Billing
from tests.indexer.support import acting_as, init_repo, make_settings


async def test_a_fourth_repository_on_the_free_plan_is_plan_required_with_the_cap(
    default_billing: Billing, make_db, tmp_path: Path
) -> None:
    db = make_db("indexer")
    settings = make_settings(tmp_path, db, billing_addr=default_billing.address)
    indexer = IndexerServicer(db, settings, HostApp(settings))
    _, alice = await default_billing.user()
    owner = f"user:{alice.user_id}"
    paths = [init_repo(tmp_path / "repos" / f"r{i}") for i in range(4)]

    async def register(path: Path) -> indexer_pb2.Repository:
        return await indexer.CreateRepository(indexer_pb2.CreateRepositoryRequest(path=str(path)), None)  # type: ignore[arg-type]

    async def count() -> int:
        reply = await indexer.CountRepositories(indexer_pb2.CountRepositoriesRequest(owner=owner), None)  # type: ignore[arg-type]
        return reply.count

    with acting_as(alice):
        first = [await register(path) for path in paths[:3]]
        assert await count() == 3
        with pytest.raises(ServiceError) as refused:
            await register(paths[3])
        assert refused.value.code == "plan_required"
        assert refused.value.http_status == 403
        assert refused.value.details == {"metric": "repositories", "used": 3, "cap": 3, "plan": "free"}
        assert (await register(paths[0])).id == first[0].id  # the same source again is not a new one
        assert await count() == 3
        await indexer.DeleteRepository(indexer_pb2.GetRepositoryRequest(repo=first[0].id), None)  # type: ignore[arg-type]
        await register(paths[3])  # room again
        assert await count() == 3
        _, mallory = await default_billing.user()
    with acting_as(mallory), pytest.raises(ServiceError) as foreign:
        await indexer.CountRepositories(indexer_pb2.CountRepositoriesRequest(owner=owner), None)  # type: ignore[arg-type]
    assert foreign.value.code == "forbidden"
