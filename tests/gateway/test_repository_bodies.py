"""The indexer's typed read messages as the REST bodies render them: exact fields and JSON types
(#12: integers are integers, times RFC 3339 UTC strings, a missing time null)."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel

from services.contracts.v1 import common_pb2, indexer_pb2
from services.gateway.routes.repositories import history_body, network_body, repository
from services.kit.messages import plain

ANY_TIME = 1_795_505_355  # 2026-11-24T07:29:15Z


def body(model: BaseModel, *, exclude_unset: bool = False) -> Any:
    """What the route answers: the response model's JSON."""
    return orjson.loads(model.model_dump_json(exclude_unset=exclude_unset))


def test_repository_times_are_rfc3339_and_integers_stay_integers() -> None:
    message = indexer_pb2.Repository(
        id="r1",
        name="proj",
        kind="local",
        source="/srv/proj",
        owner="user:u1",
        created_at=ANY_TIME * 1000 + 190,  # the indexer stores milliseconds
        installation_id=2**40,
        status="active",
        index=indexer_pb2.IndexStatus(
            repository_id="r1", state="queued", run_id="run1", files_done=0, queued_at=ANY_TIME * 1000
        ),
    )
    got = body(repository(message))
    assert got["created_at"] == "2026-11-24T07:29:15.190Z"
    assert got["installation_id"] == 2**40
    assert got["index"]["queued_at"] == "2026-11-24T07:29:15.000Z"
    assert got["index"]["started_at"] is None
    assert got["index"]["files_done"] == 0
    assert type(got["index"]["files_done"]) is int


def test_domains_and_segments() -> None:
    from services.api.repositories import Domains, Segments

    domains = indexer_pb2.Domains(
        repository_id="r1",
        commit="abc",
        total=1,
        domains=[
            indexer_pb2.Domain(
                name="app", path_prefix="app/", file_count=3, test_file_count=1, line_count=40, languages=["python"]
            )
        ],
    )
    assert body(Domains.model_validate(plain(domains))) == {
        "repository_id": "r1",
        "commit": "abc",
        "total": 1,
        "domains": [
            {
                "name": "app",
                "path_prefix": "app/",
                "file_count": 3,
                "test_file_count": 1,
                "line_count": 40,
                "languages": ["python"],
            }
        ],
    }
    segments = indexer_pb2.Segments(
        repository_id="r1",
        commit="abc",
        segments=[indexer_pb2.Segment(domain="app", name=".", path_prefix="app/", kind="package", file_count=3)],
        page=common_pb2.PageInfo(next_cursor="", total=1),
    )
    assert body(Segments.model_validate(plain(segments))) == {
        "repository_id": "r1",
        "commit": "abc",
        "segments": [{"domain": "app", "name": ".", "path_prefix": "app/", "kind": "package", "file_count": 3}],
        "page": {"next_cursor": "", "total": 1},  # was "1": int64 in the JSON mapping
    }


def test_network_cycles_are_lists_of_paths() -> None:
    message = indexer_pb2.Network(
        repository_id="r1",
        commit="abc",
        nodes=[indexer_pb2.NetworkNode(path="a.py", domain="(root)", in_degree=1, out_degree=1)],
        edges=[indexer_pb2.NetworkEdge(source="a.py", target="b.py", weight=2)],
        cycles=[indexer_pb2.ImportCycle(paths=["a.py", "b.py"])],
        domain_edges=[indexer_pb2.GroupEdge(source="x", target="y", weight=3, reverse=True)],
        counts=indexer_pb2.NetworkCounts(nodes=1, edges=1, cycles=1),
        page=common_pb2.PageInfo(next_cursor="o1", total=2),
    )
    assert body(network_body(message)) == {
        "repository_id": "r1",
        "commit": "abc",
        "nodes": [{"path": "a.py", "domain": "(root)", "in_degree": 1, "out_degree": 1}],
        "edges": [{"source": "a.py", "target": "b.py", "weight": 2}],
        "cycles": [["a.py", "b.py"]],
        "domain_edges": [{"source": "x", "target": "y", "weight": 3, "reverse": True}],
        "layer_edges": [],
        "counts": {"nodes": 1, "edges": 1, "cycles": 1},
        "page": {"next_cursor": "o1", "total": 2},
    }


def _file_history() -> indexer_pb2.FileHistory:
    record = indexer_pb2.FileHistory(
        path="a.py", commits=3, authors=2, added=10, deleted=4, churn=14, fix_commits=1, last_sha="f00"
    )
    record.first_timestamp.FromSeconds(ANY_TIME - 86400)
    record.last_timestamp.FromSeconds(ANY_TIME)
    return record


FILE_HISTORY = {
    "path": "a.py",
    "commits": 3,
    "authors": 2,
    "added": 10,
    "deleted": 4,
    "churn": 14,
    "fix_commits": 1,
    "first_timestamp": "2026-11-23T07:29:15.000Z",  # was Unix seconds
    "last_timestamp": "2026-11-24T07:29:15.000Z",
    "last_sha": "f00",
}


def test_history_of_the_repository_has_only_its_view() -> None:
    message = indexer_pb2.History(repository_id="r1", commit="abc", depth=2000, commits=3)
    message.repository.huge_commits = 1
    message.repository.hot_spots.add(path="a.py", score=4.5, commits=3, churn=14, fix_commits=1)
    message.repository.cochange_pairs = 2
    message.repository.files.append(_file_history())
    message.repository.page.total = 1
    assert body(history_body(message), exclude_unset=True) == {
        "repository_id": "r1",
        "commit": "abc",
        "depth": 2000,
        "commits": 3,
        "huge_commits": 1,
        "hot_spots": [{"path": "a.py", "score": 4.5, "commits": 3, "churn": 14, "fix_commits": 1}],
        "cochange_pairs": 2,
        "files": [FILE_HISTORY],
        "page": {"next_cursor": "", "total": 1},
    }


def test_history_of_one_file_has_only_its_view() -> None:
    message = indexer_pb2.History(repository_id="r1", commit="abc", depth=2000, commits=3)
    message.single_file.path = "a.py"
    message.single_file.file.CopyFrom(_file_history())
    message.single_file.cochanges.add(source="a.py", target="b.py", support=2, confidence=0.6667)
    message.single_file.hot_spot_rank = 1
    assert body(history_body(message), exclude_unset=True) == {
        "repository_id": "r1",
        "commit": "abc",
        "depth": 2000,
        "commits": 3,
        "path": "a.py",
        "file": FILE_HISTORY,
        "cochanges": [{"source": "a.py", "target": "b.py", "support": 2, "confidence": 0.6667}],
        "hot_spot_rank": 1,
    }
    # In the snapshot but never changed in the history read: the file is null, not absent.
    quiet = indexer_pb2.History(repository_id="r1", commit="abc", depth=2000, commits=3)
    quiet.single_file.path = "new.py"
    assert body(history_body(quiet), exclude_unset=True)["file"] is None


def test_a_files_content_is_text_whatever_its_bytes() -> None:
    from services.gateway.routes.repositories import file_body

    reply = indexer_pb2.FileContent(path="app/x.py", blob_sha="b1", commit="c1", content=b"ok = 1\n\xff\n", facts=b"f")
    assert body(file_body("r1", reply)) == {
        "repository_id": "r1",
        "path": "app/x.py",
        "commit": "c1",
        "blob_sha": "b1",
        "content": "ok = 1\n\ufffd\n",
    }
