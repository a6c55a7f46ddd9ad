"""AnalyzeFile, AnalyzePullRequest and ReviewChangeset over real gRPC on a fresh database."""

from __future__ import annotations

import pytest
from google.protobuf import json_format
from sqlalchemy import func, select
from sqlalchemy.exc import DBAPIError

from services.analyzer import queries
from services.analyzer.models import Audit, FindingRow, outbox
from services.contracts.v1 import analyzer_pb2, common_pb2, events_pb2, indexer_pb2
from services.kit.errors import ServiceError
from services.kit.grpc_client import call
from tests.analyzer.service_corpus import PLANTED, PLANTED_PATH
from tests.analyzer.service_support import ALICE, BOB, FakeRepo, Harness, harness_fixture  # noqa: F401

PLANTED_RULES = {
    ("naming.case.function", 22),
    ("documentation.docstring.function", 32),
    ("idioms.print", 39),
}


def found(result: analyzer_pb2.AnalysisResult) -> set[tuple[str, int]]:
    return {(f.rule, f.start_line) for f in result.findings}


async def analyze(h: Harness, path: str = PLANTED_PATH, content: str | None = PLANTED, **kw: object):
    request = analyzer_pb2.AnalyzeFileRequest(
        repo="r-alice", path=path, content=(content or "").encode(), has_content=content is not None, **kw
    )
    return await call(h.stub.AnalyzeFile, request, principal=ALICE)


async def test_unsaved_file_gets_exactly_the_planted_findings_with_evidence(harness: Harness) -> None:
    result = await analyze(harness)
    assert found(result) == PLANTED_RULES
    assert result.repository_id == "r-alice"
    assert result.commit == harness.indexer.repos["r-alice"].head
    assert result.files_analyzed == 1
    naming = next(f for f in result.findings if f.rule == "naming.case.function")
    assert naming.suggestion == "load_audit_names"
    assert naming.category == "naming"
    assert naming.severity == "warning"
    assert 0.9 < naming.confidence <= 1
    assert naming.id.startswith("f_")
    assert len(naming.fingerprint) == 32
    ev = naming.evidence
    assert ev.level == "strict"
    assert ev.choice == "snake_case"
    assert ev.count >= 100
    assert ev.share == 1.0
    assert ev.scope == analyzer_pb2.ConventionScope(kind="language", value="python")
    assert "snake_case" in ev.description
    assert ev.examples


async def test_first_analysis_learns_on_demand_then_serves_from_memory(harness: Harness) -> None:
    await analyze(harness)
    assert harness.indexer.calls["StreamFacts"] == 1
    before = dict(harness.indexer.calls)
    for _ in range(3):
        await analyze(harness)
    assert dict(harness.indexer.calls) == before  # content sent: no indexer round trip at all


async def test_indexed_path_costs_one_get_file(harness: Harness) -> None:
    await analyze(harness)  # learn first
    before = harness.indexer.calls["GetFile"]
    result = await analyze(harness, path="app/billing/invoice.py", content=None)
    assert harness.indexer.calls["GetFile"] == before + 1
    assert list(result.findings) == []  # the repository's own files follow its conventions


async def test_fingerprints_survive_unrelated_edits(harness: Harness) -> None:
    first = {f.rule: f.fingerprint for f in (await analyze(harness)).findings}
    moved = PLANTED.replace("log = logging.getLogger(__name__)\n", "log = logging.getLogger(__name__)\n\n\nA = 1\n")
    second = await analyze(harness, content=moved)
    assert {f.rule: f.fingerprint for f in second.findings} == first
    assert {f.start_line for f in second.findings} == {line + 3 for _, line in PLANTED_RULES}


async def test_every_analysis_is_an_audit_with_an_outbox_event(harness: Harness) -> None:
    result = await analyze(harness)
    async with harness.deps.db.session() as session:
        audit = await session.get(Audit, result.audit_id)
        stored = (await session.execute(select(func.count()).where(FindingRow.audit_id == result.audit_id))).scalar()
        events = (await session.execute(select(outbox.c.subject, outbox.c.payload))).all()
    assert audit is not None
    assert audit.kind == "file"
    assert audit.findings == 3
    assert audit.user_id == "u-alice"
    assert audit.owner == "user:u-alice"
    assert stored == 3
    completed = [events_pb2.EventEnvelope.FromString(p) for s, p in events if s == "events.analysis.completed"]
    payload = events_pb2.AnalysisCompleted.FromString(completed[-1].payload)
    assert (payload.audit_id, payload.kind, payload.files, payload.findings) == (result.audit_id, "file", 1, 3)
    assert payload.owner == "user:u-alice"
    assert payload.user_id == "u-alice"


async def test_an_audit_its_findings_and_its_event_are_written_together_or_not_at_all(harness: Harness) -> None:
    stored = (await analyze(harness)).audit_id
    async with harness.deps.db.session() as session:
        finding = (await session.execute(select(FindingRow).where(FindingRow.audit_id == stored))).scalars().first()
        events_before = (await session.execute(select(func.count()).select_from(outbox))).scalar()
    assert finding is not None
    assert finding.evidence
    assert finding.message
    audit = {
        "id": "a-broken",
        "repository_id": "r-alice",
        "owner": "",
        "user_id": "",
        "kind": "file",
        "commit": "",
        "pr_number": 0,
        "files": 1,
        "findings": 1,
        "duration_ms": 1.0,
        "created_at": 1,
        "summary": {},
    }
    broken = {"finding_id": "f", "fingerprint": "x", "rule": "r" * 500, "category": "c", "severity": "low"}
    broken |= {"confidence": 1.0, "message": "m", "path": "p", "start_line": 1, "end_line": 1, "evidence": {}}
    event = {"id": "e-broken", "subject": "s", "type": "t", "payload": b"", "created_at": 1}
    with pytest.raises(DBAPIError):  # the rule is longer than its column
        async with harness.deps.db.autocommit() as conn:
            await queries.record_audit(conn, audit, [broken], event)
    async with harness.deps.db.session() as session:
        assert await session.get(Audit, "a-broken") is None
        assert (await session.execute(select(func.count()).select_from(outbox))).scalar() == events_before


async def test_sarif_on_request(harness: Harness) -> None:
    result = await analyze(harness, format="sarif")
    sarif = json_format.MessageToDict(result.sarif)
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    assert {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results} == (
        PLANTED_RULES
    )
    assert sarif["runs"][0]["properties"]["auditId"] == result.audit_id


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"path": "app/nowhere.py", "content": None}, "file_not_found"),
        ({"path": "img/logo.png", "content": "\0PNG"}, "unsupported_file_type"),
        ({"path": "../etc/passwd"}, "validation_failed"),
        ({"format": "xml"}, "validation_failed"),
    ],
)
async def test_analysis_errors_carry_the_spec_codes(harness: Harness, kwargs: dict, code: str) -> None:
    with pytest.raises(ServiceError) as err:
        await analyze(harness, **kwargs)
    assert err.value.code == code


async def test_other_users_repository_is_not_found(harness: Harness) -> None:
    request = analyzer_pb2.AnalyzeFileRequest(repo="r-alice", path="a.py", content=b"x = 1\n", has_content=True)
    with pytest.raises(ServiceError) as err:
        await call(harness.stub.AnalyzeFile, request, principal=BOB)
    assert err.value.code == "repo_not_found"
    await analyze(harness)  # learned and cached now: the in-memory check must refuse too
    with pytest.raises(ServiceError) as err:
        await call(harness.stub.AnalyzeFile, request, principal=BOB)
    assert err.value.code == "repo_not_found"


async def test_repository_not_indexed_yet(harness: Harness) -> None:
    harness.indexer.add(FakeRepo(id="r-new", owner="user:u-alice", files={}, indexed=False))
    request = analyzer_pb2.AnalyzeFileRequest(repo="r-new", path="a.py", content=b"x = 1\n", has_content=True)
    with pytest.raises(ServiceError) as err:
        await call(harness.stub.AnalyzeFile, request, principal=ALICE)
    assert err.value.code == "repo_not_indexed"


async def test_a_repository_whose_last_index_failed_is_index_failed(harness: Harness) -> None:
    harness.indexer.add(FakeRepo(id="r-broken", owner="user:u-alice", files={}, indexed=False, failed="clone failed"))
    request = analyzer_pb2.AnalyzeFileRequest(repo="r-broken", path="a.py", content=b"x = 1\n", has_content=True)
    with pytest.raises(ServiceError) as err:
        await call(harness.stub.AnalyzeFile, request, principal=ALICE)
    assert err.value.code == "index_failed"
    assert err.value.http_status == 409
    assert err.value.details["state"] == "failed"
    assert err.value.details["error"] == "clone failed"


def _patch_for(lines: list[str], start: int) -> str:
    return f"@@ -{start},0 +{start},{len(lines)} @@\n" + "".join(f"+{ln}\n" for ln in lines)


async def test_pull_request_reports_only_changed_lines(harness: Harness) -> None:
    # The planted file exists in the base: only the print call is new in this pull request.
    harness.indexer.repos["r-alice"].files[PLANTED_PATH] = PLANTED.replace("    print(label)\n", "").encode()
    request = analyzer_pb2.AnalyzePullRequestRequest(
        repo="r-alice",
        pr_number=7,
        files=[
            analyzer_pb2.FilePatch(
                path=PLANTED_PATH,
                status="modified",
                patch=_patch_for(["    print(label)"], 39),
                content=PLANTED.encode(),
            )
        ],
    )
    result = await call(harness.stub.AnalyzePullRequest, request, principal=ALICE)
    assert found(result) == {("idioms.print", 39)}


async def test_pull_request_patch_without_content_is_applied_to_the_indexed_base(harness: Harness) -> None:
    harness.indexer.repos["r-alice"].files[PLANTED_PATH] = PLANTED.replace("    print(label)\n", "").encode()
    patch = '@@ -38,2 +38,3 @@ def format_audit_label\n     label = f"{prefix}: {name}"\n+    print(label)\n'
    patch += "     return label.strip()\n"
    request = analyzer_pb2.AnalyzePullRequestRequest(
        repo="r-alice", files=[analyzer_pb2.FilePatch(path=PLANTED_PATH, status="modified", patch=patch)]
    )
    result = await call(harness.stub.AnalyzePullRequest, request, principal=ALICE)
    assert found(result) == {("idioms.print", 39)}


async def test_pull_request_by_commits_and_change_level_findings(harness: Harness) -> None:
    repo = harness.indexer.repos["r-alice"]
    # cochange.partner is loose by default; this repository holds it to the strict bar it had.
    repo.files[".codereview.yml"] = (
        b"version: 1\nthresholds:\n  cochange.partner: {strict: {min_share: 0.8, min_count: 3}}\n"
    )
    invoice = repo.files["app/billing/invoice.py"] + b"\n\ndef void_invoice(invoice_id: str) -> str:\n"
    invoice += b'    """Void one invoice."""\n    return invoice_id\n'
    last = invoice.count(b"\n")
    repo.changes[("base1", "head1")] = [
        indexer_pb2.ChangedFile(
            path="app/billing/invoice.py",
            status="modified",
            added_lines=[indexer_pb2.LineRange(start=last - 3, end=last)],
            content=invoice,
        )
    ]
    request = analyzer_pb2.AnalyzePullRequestRequest(repo="r-alice", base="base1", head="head1")
    result = await call(harness.stub.AnalyzePullRequest, request, principal=ALICE)
    assert found(result) == {("cochange.partner", 0)}
    partner = result.findings[0]
    assert partner.evidence.choice == "app/billing/payment.py"
    assert partner.path == "app/billing/invoice.py"


def _staged_diff() -> str:
    body = PLANTED.splitlines()
    return (
        "diff --git a/app/accounts/audit.py b/app/accounts/audit.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/app/accounts/audit.py\n"
        f"@@ -0,0 +1,{len(body)} @@\n" + "".join(f"+{line}\n" for line in body)
    )


async def test_changeset_from_a_client_diff(harness: Harness) -> None:
    request = analyzer_pb2.ReviewChangesetRequest(repo="r-alice", diff=_staged_diff())
    result = await call(harness.stub.ReviewChangeset, request, principal=ALICE)
    # A new module without a test, where the repository tests its modules, is a change-level finding.
    assert found(result) == PLANTED_RULES | {("structure.tests.coverage", 0)}


@pytest.mark.parametrize(
    "diff",
    [
        "diff --git a/../secret.py b/../secret.py\nnew file mode 100644\n--- /dev/null\n+++ b/../secret.py\n"
        "@@ -0,0 +1 @@\n+x = 1\n",
        "--- a/app/x.py\n+++ b/app/../../x.py\n@@ -1 +1 @@\n-a\n+b\n",
        "not a diff at all\n",
    ],
)
async def test_a_client_diff_naming_a_path_outside_the_repository_or_nothing_is_refused(
    harness: Harness, diff: str
) -> None:
    request = analyzer_pb2.ReviewChangesetRequest(repo="r-alice", diff=diff)
    with pytest.raises(ServiceError) as err:
        await call(harness.stub.ReviewChangeset, request, principal=ALICE)
    assert err.value.code == "validation_failed"
    assert err.value.details["field"] == "diff"


async def test_changeset_from_staged_changes_and_no_files(harness: Harness) -> None:
    repo = harness.indexer.repos["r-alice"]
    with pytest.raises(ServiceError) as err:
        await call(harness.stub.ReviewChangeset, analyzer_pb2.ReviewChangesetRequest(repo="r-alice"), principal=ALICE)
    assert err.value.code == "no_files"  # not a local repository: nothing staged to read
    repo.staged = []
    with pytest.raises(ServiceError) as err:
        await call(harness.stub.ReviewChangeset, analyzer_pb2.ReviewChangesetRequest(repo="r-alice"), principal=ALICE)
    assert err.value.code == "no_files"
    repo.staged = [
        indexer_pb2.ChangedFile(
            path=PLANTED_PATH,
            status="modified",
            added_lines=[indexer_pb2.LineRange(start=22, end=22)],
            content=PLANTED.encode(),
        )
    ]
    result = await call(
        harness.stub.ReviewChangeset, analyzer_pb2.ReviewChangesetRequest(repo="r-alice", staged=True), principal=ALICE
    )
    assert found(result) == {("naming.case.function", 22)}


async def test_changeset_by_file_paths_reviews_whole_indexed_files(harness: Harness) -> None:
    await analyze(harness)  # learned from the corpus alone; the planted file is indexed afterwards
    harness.indexer.repos["r-alice"].files[PLANTED_PATH] = PLANTED.encode()
    request = analyzer_pb2.ReviewChangesetRequest(repo="r-alice", file_paths=[PLANTED_PATH, "app/gone.py"])
    result = await call(harness.stub.ReviewChangeset, request, principal=ALICE)
    assert {(f.rule, f.start_line) for f in result.findings if f.start_line} == PLANTED_RULES
    assert [(s.path, s.reason) for s in result.skipped] == [("app/gone.py", "file_not_found")]


async def test_organization_roles_and_an_owner_the_indexer_changed(harness: Harness) -> None:
    harness.indexer.add(FakeRepo(id="r-org", owner="org:o1", files=harness.files))
    viewer = common_pb2.Principal(
        user_id="u-v", memberships=[common_pb2.Membership(org_id="o1", org_name="acme", role="viewer")]
    )
    request = analyzer_pb2.AnalyzeFileRequest(
        repo="r-org", path=PLANTED_PATH, content=PLANTED.encode(), has_content=True
    )
    with pytest.raises(ServiceError) as err:
        await call(harness.stub.AnalyzeFile, request, principal=viewer)
    assert err.value.code == "forbidden"
    glob = await call(harness.stub.GetGlobalContext, analyzer_pb2.RepoRequest(repo="r-org"), principal=viewer)
    # A viewer reads (and the read learned the repository on demand).
    assert glob.repository_id == "r-org"
    assert glob.strongest_conventions

    await analyze(harness)
    harness.indexer.repos["r-alice"].owner = "user:u-bob"  # claimed by someone else since the event
    request.repo = "r-alice"
    assert len((await call(harness.stub.AnalyzeFile, request, principal=BOB)).findings) == 3
    with pytest.raises(ServiceError) as err:
        await analyze(harness)
    assert err.value.code == "repo_not_found"


def _swap_logging(source: bytes, keep: bool) -> tuple[bytes, str]:
    """The file with ``loguru`` imported (instead of ``logging`` unless ``keep``) and its patch."""
    old = b"import logging\n"
    new = b"import logging\nfrom loguru import logger\n" if keep else b"from loguru import logger\n"
    line = source[: source.index(old)].count(b"\n") + 1
    before = " import logging\n" if keep else "-import logging\n"
    patch = f"@@ -{line},1 +{line},{2 if keep else 1} @@\n{before}+from loguru import logger\n"
    return source.replace(old, new, 1), patch


async def test_a_change_that_replaces_the_settled_library_is_not_told_to_keep_it(harness: Harness) -> None:
    repo = harness.indexer.repos["r-alice"]
    path = "app/billing/invoice.py"
    replaced, patch = _swap_logging(repo.files[path], keep=False)
    await call(harness.stub.GetGlobalContext, analyzer_pb2.RepoRequest(repo="r-alice"), principal=ALICE)  # learn
    fetched = harness.indexer.calls.copy()
    request = analyzer_pb2.AnalyzePullRequestRequest(
        repo="r-alice",
        files=[analyzer_pb2.FilePatch(path=path, status="modified", patch=patch, content=replaced)],
    )
    result = await call(harness.stub.AnalyzePullRequest, request, principal=ALICE)
    assert not any(f.rule == "dependencies.library.logging" for f in result.findings)
    # The base came with the request's one StreamFiles; the library check reused it.
    assert harness.indexer.calls["StreamFiles"] == fetched["StreamFiles"] + 1
    assert harness.indexer.calls["GetFile"] == fetched["GetFile"]

    # Adding loguru next to logging replaces nothing: the question stands.
    added, patch = _swap_logging(repo.files[path], keep=True)
    request = analyzer_pb2.AnalyzePullRequestRequest(
        repo="r-alice",
        files=[analyzer_pb2.FilePatch(path=path, status="modified", patch=patch, content=added)],
    )
    result = await call(harness.stub.AnalyzePullRequest, request, principal=ALICE)
    [finding] = [f for f in result.findings if f.rule == "dependencies.library.logging"]
    assert finding.evidence.choice == "logging"


async def test_pull_request_answers_what_its_base_already_had_apart(harness: Harness) -> None:
    """The base commit's content comes with GetChanges: an annotation-only edit of an old
    undocumented function is "already there", a new undocumented function is the change's."""
    repo = harness.indexer.repos["r-alice"]
    old_def = "def count_audit_items(store: AuditStore) -> int:"
    head = PLANTED.replace(old_def, "def count_audit_items(store: AuditStore, /) -> int:")
    head += "\n\ndef drop_audit(store: AuditStore, audit_id: str) -> None:\n    store.items.pop(audit_id, None)\n"
    lines = head.split("\n")
    edited = lines.index(old_def.replace(") ->", ", /) ->")) + 1
    new = next(i for i, line in enumerate(lines, 1) if line.startswith("def drop_audit"))
    repo.changes[("base2", "head2")] = [
        indexer_pb2.ChangedFile(
            path=PLANTED_PATH,
            status="modified",
            added_lines=[
                indexer_pb2.LineRange(start=edited, end=edited),
                indexer_pb2.LineRange(start=new - 2, end=new + 1),
            ],
            content=head.encode(),
            base_content=PLANTED.encode(),
        )
    ]
    request = analyzer_pb2.AnalyzePullRequestRequest(repo="r-alice", base="base2", head="head2", pr_number=3)
    result = await call(harness.stub.AnalyzePullRequest, request, principal=ALICE)

    assert found(result) == {("documentation.docstring.function", new)}
    assert [(f.rule, f.start_line, f.preexisting) for f in result.preexisting] == [
        ("documentation.docstring.function", edited, True)
    ]
    assert result.preexisting_count == 1
    assert not any(f.preexisting for f in result.findings)
    async with harness.deps.db.session() as session:
        audit = await session.get(Audit, result.audit_id)
        stored = (await session.execute(select(FindingRow.rule).where(FindingRow.audit_id == result.audit_id))).all()
    assert audit is not None
    assert audit.findings == 1
    assert audit.summary["preexisting"] == 1
    assert [r for (r,) in stored] == ["documentation.docstring.function"]  # only what the change introduced

    # The same change without a base (one file, or the base unknown) reports both, as before.
    single = await analyze(harness, content=head)
    assert {("documentation.docstring.function", edited), ("documentation.docstring.function", new)} <= found(single)
    assert list(single.preexisting) == []
    assert single.preexisting_count == 0


async def test_a_changeset_diff_is_compared_with_the_indexed_file(harness: Harness) -> None:
    harness.indexer.repos["r-alice"].files[PLANTED_PATH] = PLANTED.encode()
    diff = (
        f"diff --git a/{PLANTED_PATH} b/{PLANTED_PATH}\n--- a/{PLANTED_PATH}\n+++ b/{PLANTED_PATH}\n"
        "@@ -32,1 +32,1 @@\n-def count_audit_items(store: AuditStore) -> int:\n"
        "+def count_audit_items(store: AuditStore, /) -> int:\n"
    )
    request = analyzer_pb2.ReviewChangesetRequest(repo="r-alice", diff=diff)
    result = await call(harness.stub.ReviewChangeset, request, principal=ALICE)
    assert found(result) == set()
    assert [(f.rule, f.start_line) for f in result.preexisting] == [("documentation.docstring.function", 32)]
    assert result.preexisting_count == 1


async def test_a_base_the_client_sends_wins_over_the_indexed_file(harness: Harness) -> None:
    """A local branch's fork point is not the indexed snapshot: the CLI sends each file's base."""
    old_def = "def count_audit_items(store: AuditStore) -> int:"
    head = PLANTED.replace(old_def, old_def.replace(") ->", ", /) ->"))
    patch = f"@@ -32,1 +32,1 @@\n-{old_def}\n+{old_def.replace(') ->', ', /) ->')}\n"
    await call(harness.stub.GetGlobalContext, analyzer_pb2.RepoRequest(repo="r-alice"), principal=ALICE)  # learn
    fetched = harness.indexer.calls["GetFile"]
    request = analyzer_pb2.AnalyzePullRequestRequest(
        repo="r-alice",
        files=[
            analyzer_pb2.FilePatch(
                path=PLANTED_PATH, status="modified", patch=patch, content=head.encode(), base_content=PLANTED.encode()
            )
        ],
    )
    result = await call(harness.stub.AnalyzePullRequest, request, principal=ALICE)
    assert found(result) == set()
    assert [(f.rule, f.start_line) for f in result.preexisting] == [("documentation.docstring.function", 32)]
    assert harness.indexer.calls["GetFile"] == fetched  # the indexed file was not needed

    # Without it, the indexed snapshot is the base; the planted file is not in it: all is new.
    request.files[0].ClearField("base_content")
    result = await call(harness.stub.AnalyzePullRequest, request, principal=ALICE)
    assert ("documentation.docstring.function", 32) in found(result)
    assert list(result.preexisting) == []
