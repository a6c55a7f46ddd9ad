"""Reports, preferences and the read documents over real gRPC on a fresh database."""

from __future__ import annotations

import orjson
import pytest
from sqlalchemy import select

from services.analyzer import queries
from services.analyzer.audits import fleet_conventions
from services.analyzer.models import FeedbackRow
from services.contracts.v1 import analyzer_pb2
from services.kit.errors import ServiceError
from services.kit.grpc_client import call
from tests.analyzer.service_corpus import PLANTED, PLANTED_PATH
from tests.analyzer.service_support import ALICE, BOB, Harness, harness_fixture  # noqa: F401


async def analyze(h: Harness, content: str = PLANTED, path: str = PLANTED_PATH) -> analyzer_pb2.AnalysisResult:
    request = analyzer_pb2.AnalyzeFileRequest(repo="r-alice", path=path, content=content.encode(), has_content=True)
    return await call(h.stub.AnalyzeFile, request, principal=ALICE)


async def report(h: Harness, feedback=(), findings=(), principal=ALICE) -> analyzer_pb2.ReportFindingsResponse:
    request = analyzer_pb2.ReportFindingsRequest(repo="r-alice", feedback=list(feedback), findings=list(findings))
    return await call(h.stub.ReportFindings, request, principal=principal)


def rules(result: analyzer_pb2.AnalysisResult) -> dict[str, analyzer_pb2.Finding]:
    return {f.rule: f for f in result.findings}


async def test_dismissed_finding_stays_quiet_and_accepting_revives_it(harness: Harness) -> None:
    before = rules(await analyze(harness))
    printed = before["idioms.print"]
    reply = await report(harness, [analyzer_pb2.FeedbackItem(finding_id=printed.id, verdict="dismissed")])
    # A dismissal is recorded, not accepted.
    assert (reply.recorded, reply.accepted, dict(reply.verdicts)) == (1, 0, {"dismissed": 1})
    assert reply.calibration.rules[0].rule == "idioms.print"
    assert reply.calibration.rules[0].false_positive_rate == 1.0
    after = rules(await analyze(harness))
    assert set(after) == set(before) - {"idioms.print"}
    # The same code moved elsewhere in the file keeps its fingerprint, so it stays quiet there too.
    moved = await analyze(harness, PLANTED.replace("import logging\n", "import logging\nimport os\n"))
    assert "idioms.print" not in rules(moved)
    await report(harness, [analyzer_pb2.FeedbackItem(fingerprint=printed.fingerprint, verdict="accepted")])
    assert "idioms.print" in rules(await analyze(harness))


def _variant(i: int) -> str:
    """The planted file with the print call in a differently named function, so fingerprints differ."""
    return PLANTED.replace("format_audit_label", f"format_audit_label_{i}")


async def test_a_rule_people_keep_rejecting_is_downgraded_then_muted(harness: Harness) -> None:
    base = rules(await analyze(harness))["idioms.print"]
    assert base.severity == "warning"
    for i in range(10):
        finding = rules(await analyze(harness, _variant(i)))["idioms.print"]
        reply = await report(harness, [analyzer_pb2.FeedbackItem(finding_id=finding.id, verdict="false_positive")])
        state = reply.calibration.rules[0].state
        if i + 1 == 5:
            assert state == "downgraded"
            fresh = rules(await analyze(harness, _variant(100)))["idioms.print"]
            assert fresh.severity == "info"  # lowered one step
            assert fresh.confidence < base.confidence
    assert state == "muted"
    assert "idioms.print" not in rules(await analyze(harness, _variant(200)))
    # Other rules are untouched by this rule's record.
    assert "naming.case.function" in rules(await analyze(harness, _variant(201)))


async def test_report_validation_and_unknown_findings(harness: Harness) -> None:
    await analyze(harness)
    with pytest.raises(ServiceError) as err:
        await report(harness, [analyzer_pb2.FeedbackItem(finding_id="f_x", verdict="meh")])
    assert err.value.code == "validation_failed"
    assert err.value.details["field"] == "feedback[0].verdict"
    reply = await report(harness, [analyzer_pb2.FeedbackItem(finding_id="f_nope", verdict="dismissed")])
    assert (reply.recorded, reply.accepted, dict(reply.verdicts)) == (0, 0, {})
    assert list(reply.calibration.unknown_findings) == ["f_nope"]
    with pytest.raises(ServiceError) as err:
        await report(harness, principal=BOB)
    assert err.value.code == "repo_not_found"


async def test_external_findings_join_history_and_become_a_convention(harness: Harness) -> None:
    await analyze(harness)
    externals = [
        analyzer_pb2.ExternalFinding(
            category="sql-injection-risk",
            path=f"app/reports/{name}.py",
            start_line=3,
            end_line=4,
            message="string-built SQL",
            source="security-review",
        )
        for name in ("user", "invoice", "order", "ledger", "payment", "report")
    ]
    reply = await report(harness, findings=externals)
    assert reply.external == 6
    conventions = reply.calibration.report_conventions
    assert [(c.rule, c.scope.kind, c.scope.value) for c in conventions] == [
        ("external.sql_injection_risk", "directory", "app/reports")
    ]
    context = await call(
        harness.stub.GetReviewContext,
        analyzer_pb2.ReviewContextRequest(repo="r-alice", path="app/reports/user.py"),
        principal=ALICE,
    )
    assert context.history.reports.external[0].message == "string-built SQL"
    assert context.history.reports.external[0].created_at.seconds > 0
    assert "external.sql_injection_risk" in {c.rule for c in context.conventions}


async def test_review_context_for_a_path(harness: Harness) -> None:
    result = await analyze(harness)
    harness.indexer.repos["r-alice"].files[PLANTED_PATH] = PLANTED.encode()
    await report(harness, [analyzer_pb2.FeedbackItem(finding_id=result.findings[0].id, verdict="accepted")])
    request = analyzer_pb2.ReviewContextRequest(repo="r-alice", path="app/billing/invoice.py")
    context = await call(harness.stub.GetReviewContext, request, principal=ALICE)
    assert context.domain.name == "billing"
    assert context.segment.path_prefix == "app/billing/"
    assert context.language == "python"
    by_rule = {c.rule: c for c in context.conventions}
    assert by_rule["naming.case.function"].choice == "snake_case"
    assert by_rule["naming.case.function"].count >= 100
    assert by_rule["naming.case.function"].level == "strict"
    assert context.history.co_changes[0].path == "app/billing/payment.py"
    assert context.history.file.single_file.file.path == "app/billing/invoice.py"
    planted = await call(
        harness.stub.GetReviewContext,
        analyzer_pb2.ReviewContextRequest(repo="r-alice", path=PLANTED_PATH),
        principal=ALICE,
    )
    past = planted.history.findings
    assert {f.rule for f in past} == {f.rule for f in result.findings}
    assert [f.verdict for f in past if f.id == result.findings[0].id] == ["accepted"]
    assert all(not f.HasField("verdict") for f in past if f.id != result.findings[0].id)
    assert planted.history.reports.feedback[0].verdict == "accepted"
    unknown = await call(
        harness.stub.GetReviewContext,
        analyzer_pb2.ReviewContextRequest(repo="r-alice", path="notes/readme.unknownext"),
        principal=ALICE,
    )
    assert not unknown.HasField("language")


async def test_global_context_and_dashboard(harness: Harness) -> None:
    result = await analyze(harness)
    await report(harness, [analyzer_pb2.FeedbackItem(finding_id=result.findings[0].id, verdict="dismissed")])
    glob = await call(harness.stub.GetGlobalContext, analyzer_pb2.RepoRequest(repo="r-alice"), principal=ALICE)
    assert glob.languages[0].language == "python"
    assert glob.files == len(harness.files)
    assert {d.name for d in glob.domains} >= {"accounts", "billing", "reports"}
    assert glob.conventions.strict >= 20
    assert glob.strongest_conventions[0].level == "strict"
    assert glob.hot_spots[0].path == "app/billing/invoice.py"
    assert glob.history.commits == 7
    assert glob.config.file == ".codereview.yml"
    board = await call(harness.stub.GetDashboard, analyzer_pb2.RepoRequest(repo="r-alice"), principal=ALICE)
    assert board.index.state == "ready"
    assert board.findings.total == 3
    assert dict(board.findings.by_severity) == {"warning": 2, "info": 1}
    assert board.findings.over_time[0].total == 3
    assert dict(board.audits.by_kind) == {"file": 1}
    assert board.audits.last_at.seconds > 0
    [acceptance] = board.acceptance
    assert acceptance.rule == result.findings[0].rule
    assert acceptance.false_positive_rate == 1.0
    assert acceptance.acceptance_rate == 0.0
    assert board.false_positive_rate == 1.0
    assert board.strongest_conventions
    assert board.model.conventions.strict >= 20
    assert board.model.conventions.by_family["naming"].strict >= 1


async def test_audit_results_only_cover_visible_repositories(harness: Harness) -> None:
    result = await analyze(harness)
    request = analyzer_pb2.AuditResultsRequest(repository_ids=["r-alice", "r-other"], limit=10)
    body = await call(harness.stub.GetAuditResults, request, principal=ALICE)
    assert [a.id for a in body.audits] == [result.audit_id]
    assert body.audits[0].findings == 3
    assert not body.audits[0].HasField("pr_number")
    fleet = body.fleet
    assert fleet.learned == 1
    assert fleet.repositories == 1  # r-other is not Alice's: it is not in her fleet
    assert all(c.repositories <= fleet.repositories for c in fleet.conventions)
    naming = next(c for c in fleet.conventions if c.rule == "naming.case.function")
    assert naming.majority == "snake_case"
    assert naming.repositories == 1
    assert fleet.by_repository[0].repository_id == "r-alice"
    stranger = await call(harness.stub.GetAuditResults, request, principal=BOB)
    assert list(stranger.audits) == []
    assert stranger.fleet.learned == 0
    assert stranger.fleet.repositories == 0


async def test_preferences_merge_patch_validation_and_effect(harness: Harness) -> None:
    owner = "user:u-alice"
    get = analyzer_pb2.PreferencesRequest(owner=owner)
    defaults = await call(harness.stub.GetAuditPreferences, get, principal=ALICE)
    assert defaults.min_severity == "info"
    assert "naming" in defaults.enabled_families
    assert not defaults.HasField("updated_at")

    def patch(body: dict) -> analyzer_pb2.UpdatePreferencesRequest:
        return analyzer_pb2.UpdatePreferencesRequest(owner=owner, patch=orjson.dumps(body))

    updated = await call(
        harness.stub.UpdateAuditPreferences,
        patch({"min_severity": "warning", "ignored_paths": ["legacy/**"]}),
        principal=ALICE,
    )
    assert updated.min_severity == "warning"
    assert list(updated.ignored_paths) == ["legacy/**"]
    assert updated.updated_by == ALICE.user_id
    assert updated.updated_at.seconds > 0
    assert {f.rule for f in (await analyze(harness)).findings} == {"naming.case.function", "idioms.print"}
    ignored = await analyze(harness, path="legacy/audit.py")
    assert list(ignored.findings) == []
    assert ignored.skipped[0].reason == "ignored"
    await call(
        harness.stub.UpdateAuditPreferences,
        patch({"min_severity": None, "enabled_families": ["idioms"]}),
        principal=ALICE,
    )
    assert {f.rule for f in (await analyze(harness)).findings} == {"idioms.print"}
    for bad, field in (({"colour": "red"}, "colour"), ({"min_confidence": 2}, "min_confidence"),
                       ({"enabled_families": ["astrology"]}, "enabled_families")):  # fmt: skip
        with pytest.raises(ServiceError) as err:
            await call(harness.stub.UpdateAuditPreferences, patch(bad), principal=ALICE)
        assert err.value.code == "validation_failed"
        assert err.value.details["field"] == field
    with pytest.raises(ServiceError) as err:
        await call(harness.stub.GetAuditPreferences, get, principal=BOB)
    assert err.value.code == "forbidden"


def test_fleet_conventions_count_repositories_not_conventions() -> None:
    from types import SimpleNamespace

    def model(repo_id: str, *choices: str) -> SimpleNamespace:
        enforced = [
            {"rule": "vocabulary.term", "family": "vocabulary", "language": "python", "choice": c} for c in choices
        ]
        return SimpleNamespace(id=repo_id, summary={"enforced": enforced})

    # Two repositories, one enforcing ten terms: the rule holds in 2 repositories, not 11.
    [term] = fleet_conventions([model("a", *(f"t{i}" for i in range(10))), model("b", "t0")])
    assert term.repositories == 2
    assert term.majority == "t0"
    assert term.agreement == 1.0
    assert term.choices["t0"] == 2
    assert max(term.choices.values()) <= term.repositories


async def test_a_large_report_is_recorded_in_a_few_statements_and_its_last_word_wins(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chunks of two rows, so a handful of findings already spans several INSERT statements.
    monkeypatch.setattr(queries, "_FEEDBACK_CHUNK", 2)
    found = list(rules(await analyze(harness)).values())
    assert len(found) >= 3
    items = [analyzer_pb2.FeedbackItem(finding_id=f.id, verdict="dismissed") for f in found]
    # The same finding again by fingerprint, later in the report: its verdict is the one kept.
    items.append(analyzer_pb2.FeedbackItem(fingerprint=found[0].fingerprint, verdict="accepted"))
    items += [analyzer_pb2.FeedbackItem(fingerprint=f"{i:064x}", verdict="dismissed") for i in range(4000)]
    reply = await report(harness, items)
    assert reply.recorded == len(found) + 1
    assert (reply.accepted, dict(reply.verdicts)) == (1, {"dismissed": len(found), "accepted": 1})
    assert len(reply.calibration.unknown_findings) == 4000
    async with harness.deps.db.session() as session:
        stored = {
            fp: verdict
            for fp, verdict in (
                await session.execute(
                    select(FeedbackRow.fingerprint, FeedbackRow.verdict).where(FeedbackRow.repository_id == "r-alice")
                )
            ).all()
        }
    assert stored == {f.fingerprint: "dismissed" for f in found} | {found[0].fingerprint: "accepted"}
