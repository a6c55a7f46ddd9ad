"""The analyzer's messages → the REST bodies of services/api/analysis.py: exact fields and JSON types.

The analyzer's own answers are pinned end to end in tests/e2e/test_review.py; these cover the
conversions the protobuf JSON mapping does not do by itself (Params, SARIF integers, optional
fields, Timestamps) on hand-built messages.
"""

from __future__ import annotations

import orjson
from google.protobuf import timestamp_pb2

from services.api import analysis as a
from services.contracts.v1 import analyzer_pb2, indexer_pb2
from services.gateway import analyzer_bodies


def json_of(model: a.Body, *, exclude_unset: bool = False) -> dict:
    return orjson.loads(orjson.dumps(model.model_dump(mode="json", exclude_unset=exclude_unset)))


def at(ms: int) -> timestamp_pb2.Timestamp:
    out = timestamp_pb2.Timestamp()
    out.FromMilliseconds(ms)
    return out


def test_an_analysis_result_renders_typed_evidence_and_params() -> None:
    evidence = analyzer_pb2.Evidence(
        level="strict",
        symbol="loadAuditNames",
        convention="naming.case.function@language:python[python]",
        scope=analyzer_pb2.ConventionScope(kind="language", value="python"),
        choice="snake_case",
        share=1.0,
        count=135,
        support=135,
        description="135 of 135 python functions (100%) are snake_case",
        examples=["load_user_names"],
        detail={
            "name": analyzer_pb2.Param(text="loadAuditNames"),
            "length": analyzer_pb2.Param(integer=93),
            "ratio": analyzer_pb2.Param(number=0.5),
            "habit": analyzer_pb2.Param(flag=True),
        },
    )
    change_level = analyzer_pb2.Evidence(level="strict")
    result = analyzer_pb2.AnalysisResult(
        audit_id="a1",
        repository_id="r1",
        commit="c1",
        files_analyzed=1,
        duration_ms=4.25,
        findings=[
            analyzer_pb2.Finding(
                id="f_1",
                fingerprint="fp",
                rule="naming.case.function",
                category="naming",
                severity="warning",
                confidence=0.97,
                message="m",
                path="a.py",
                start_line=22,
                end_line=22,
                evidence=evidence,
                suggestion="load_audit_names",
            ),
            analyzer_pb2.Finding(
                id="f_2",
                fingerprint="fp2",
                rule="structure.tests.coverage",
                category="structure",
                severity="info",
                confidence=0.8,
                message="m",
                path="b.py",
                evidence=change_level,
            ),
        ],
        skipped=[analyzer_pb2.SkippedFile(path="logo.png", reason="binary")],
        preexisting=[
            analyzer_pb2.Finding(
                id="f_3",
                fingerprint="fp3",
                rule="documentation.docstring.function",
                category="documentation",
                severity="info",
                confidence=0.9,
                message="m",
                path="a.py",
                start_line=40,
                end_line=40,
                evidence=analyzer_pb2.Evidence(level="strict", detail={"words": analyzer_pb2.Param(integer=3)}),
                preexisting=True,
            )
        ],
        preexisting_count=7,
    )
    body = json_of(analyzer_bodies.analysis(result))
    assert body == {
        "audit_id": "a1",
        "repository_id": "r1",
        "commit": "c1",
        "files_analyzed": 1,
        "duration_ms": 4.25,
        "skipped": [{"path": "logo.png", "reason": "binary"}],
        "findings": [
            {
                "id": "f_1",
                "fingerprint": "fp",
                "rule": "naming.case.function",
                "category": "naming",
                "severity": "warning",
                "confidence": 0.97,
                "message": "m",
                "path": "a.py",
                "start_line": 22,
                "end_line": 22,
                "suggestion": "load_audit_names",
                "preexisting": False,
                "more": 0,
                "evidence": {
                    "level": "strict",
                    "symbol": "loadAuditNames",
                    "convention": "naming.case.function@language:python[python]",
                    "scope": {"kind": "language", "value": "python"},
                    "choice": "snake_case",
                    "share": 1.0,
                    "count": 135,
                    "support": 135,
                    "description": "135 of 135 python functions (100%) are snake_case",
                    "examples": ["load_user_names"],
                    "detail": {"name": "loadAuditNames", "length": 93, "ratio": 0.5, "habit": True},
                },
            },
            {
                "id": "f_2",
                "fingerprint": "fp2",
                "rule": "structure.tests.coverage",
                "category": "structure",
                "severity": "info",
                "confidence": 0.8,
                "message": "m",
                "path": "b.py",
                "start_line": 0,
                "end_line": 0,
                "suggestion": "",
                "preexisting": False,
                "more": 0,
                "evidence": {
                    "level": "strict",
                    "symbol": "",
                    "convention": None,
                    "scope": None,
                    "choice": None,
                    "share": None,
                    "count": None,
                    "support": None,
                    "description": "",
                    "examples": [],
                    "detail": {},
                },
            },
        ],
        "preexisting": [
            {
                "id": "f_3",
                "fingerprint": "fp3",
                "rule": "documentation.docstring.function",
                "category": "documentation",
                "severity": "info",
                "confidence": 0.9,
                "message": "m",
                "path": "a.py",
                "start_line": 40,
                "end_line": 40,
                "suggestion": "",
                "preexisting": True,
                "more": 0,
                "evidence": {
                    "level": "strict",
                    "symbol": "",
                    "convention": None,
                    "scope": None,
                    "choice": None,
                    "share": None,
                    "count": None,
                    "support": None,
                    "description": "",
                    "examples": [],
                    "detail": {"words": 3},
                },
            }
        ],
        "preexisting_count": 7,
    }
    detail = body["findings"][0]["evidence"]["detail"]
    assert [type(detail[k]) for k in ("length", "ratio", "habit")] == [int, float, bool]


def test_a_sarif_log_keeps_its_integers() -> None:
    result = analyzer_pb2.AnalysisResult()
    log = {
        "version": "2.1.0",
        "runs": [{"results": [{"ruleIndex": 0, "locations": [{"region": {"startLine": 3}}], "confidence": 0.5}]}],
    }
    result.sarif.update(log)
    rendered = analyzer_bodies.sarif(result.sarif)
    assert rendered == log
    assert type(rendered["runs"][0]["results"][0]["ruleIndex"]) is int


def test_preferences_times_and_unset_optionals() -> None:
    defaults = analyzer_pb2.AuditPreferences(owner="user:u1", min_severity="info", enabled_families=["naming"])
    assert json_of(analyzer_bodies.body(a.AuditPreferences, defaults)) == {
        "owner": "user:u1",
        "enabled_families": ["naming"],
        "min_severity": "info",
        "min_confidence": 0.0,
        "ignored_paths": [],
        "disabled_rules": [],
        "updated_at": None,
        "updated_by": "",
    }
    saved = analyzer_pb2.AuditPreferences(owner="user:u1", min_severity="warning", updated_at=at(1795505355190))
    assert json_of(analyzer_bodies.body(a.AuditPreferences, saved))["updated_at"] == "2026-11-24T07:29:15.190Z"
    audits = analyzer_pb2.AuditResults(
        audits=[analyzer_pb2.AuditSummary(id="a1", kind="file", created_at=at(1795505355190))],
        fleet=analyzer_pb2.Fleet(false_positive_rate=0.25),
    )
    body = json_of(analyzer_bodies.body(a.AuditResults, audits))
    assert body["audits"][0]["pr_number"] is None
    assert body["audits"][0]["created_at"] == "2026-11-24T07:29:15.190Z"
    assert body["fleet"]["false_positive_rate"] == 0.25


def test_a_review_context_inlines_the_path_history_and_keeps_nulls() -> None:
    history = indexer_pb2.History(repository_id="r1", commit="c1", depth=500, commits=7)
    history.single_file.path = "a.py"
    history.single_file.file.CopyFrom(
        indexer_pb2.FileHistory(path="a.py", commits=2, authors=1, churn=12, last_timestamp=at(1795505355000))
    )
    context = analyzer_pb2.ReviewContext(
        repository_id="r1",
        commit="c1",
        path="a.py",
        history=analyzer_pb2.ReviewHistory(
            file=history,
            findings=[analyzer_pb2.PastFinding(id="f_1", fingerprint="fp", rule="r", severity="info", path="a.py")],
            reports=analyzer_pb2.ReviewReports(),
        ),
    )
    # As the route dumps it (response_model_exclude_unset): every field but the other view's.
    body = json_of(analyzer_bodies.review_context(context), exclude_unset=True)
    assert body["language"] is None
    assert body["domain"] is None
    assert body["segment"] is None
    file = body["history"]["file"]
    assert set(file) == {"repository_id", "commit", "depth", "commits", "path", "file", "cochanges", "hot_spot_rank"}
    assert file["file"]["churn"] == 12
    assert file["file"]["last_timestamp"] == "2026-11-24T07:29:15.000Z"
    assert file["file"]["first_timestamp"] is None
    assert body["history"]["findings"][0]["verdict"] is None
    assert body["history"]["findings"][0]["created_at"] is None
