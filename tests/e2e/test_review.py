"""The review engine's done-when, through the real gateway and all five service processes.

A local git repository with one consistent style is registered, indexed and learned; then a file
with planted deviations gets exactly those findings with evidence, a staged changeset and a pull
request are limited to their changed lines, dismissals take effect, and the read documents
(context, global context, dashboard, audit results and its deprecated alias, preferences) answer.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.analyzer.service_corpus import PLANTED, PLANTED_PATH, git, make_git_repo
from tests.e2e.conftest import admin_token
from tests.e2e.harness import RunningSystem

pytestmark = pytest.mark.e2e

PLANTED_RULES = {
    ("naming.case.function", 22),
    ("documentation.docstring.function", 32),
    ("idioms.print", 39),
}


@dataclass
class Indexed:
    repo_id: str
    path: Path
    head: str
    auth: dict[str, str]


def request(http: httpx.Client, method: str, url: str, auth: dict[str, str], **kw: object) -> httpx.Response:
    """One call, waiting out the token's rate limit rather than failing on it."""
    while True:
        reply = http.request(method, url, headers=auth, **kw)  # type: ignore[arg-type]
        if reply.status_code != 429:
            return reply
        time.sleep(float(reply.headers.get("retry-after", "1")))


def ok(reply: httpx.Response, status: int = 200) -> dict:
    assert reply.status_code == status, reply.text
    return reply.json()


def assert_error(reply: httpx.Response, status: int, code: str) -> dict:
    assert reply.status_code == status, reply.text
    body = reply.json()
    assert set(body) == {"error", "code", "details"}
    assert body["code"] == code
    return body


def found(body: dict) -> set[tuple[str, int]]:
    return {(f["rule"], f["start_line"]) for f in body["findings"]}


@pytest.fixture(scope="module")
def indexed(system: RunningSystem, http: httpx.Client) -> Indexed:
    auth = {"Authorization": f"Bearer {admin_token(system, 'reviewer')}"}
    path = system.work / "repos" / "shop"  # type: ignore[attr-defined]
    head = make_git_repo(path)
    repo_id = ok(request(http, "POST", "/v1/repositories", auth, json={"path": str(path)}), 201)["id"]
    ok(request(http, "POST", f"/v1/repositories/{repo_id}/index_repo", auth), 202)
    deadline = time.monotonic() + 180
    status: dict = {}
    while time.monotonic() < deadline:
        status = ok(request(http, "GET", f"/v1/repositories/{repo_id}/index/status", auth))
        if status["state"] in ("ready", "failed"):
            break
        time.sleep(0.5)
    assert status["state"] == "ready", status
    assert status["head_sha"] == head
    # The analyzer learns on the repository.indexed event; the status shows its model's commit.
    wait_learned(http, repo_id, head, auth)
    context = ok(request(http, "GET", f"/v1/repositories/{repo_id}/global_context", auth))
    assert context["commit"] == head
    return Indexed(repo_id, path, head, auth)


def analyze(http: httpx.Client, ix: Indexed, body: dict, auth: dict[str, str] | None = None) -> httpx.Response:
    return request(http, "POST", f"/v1/repositories/{ix.repo_id}/analyze", auth or ix.auth, json=body)


def test_planted_deviations_are_found_exactly_with_evidence(http: httpx.Client, indexed: Indexed) -> None:
    body = ok(analyze(http, indexed, {"path": PLANTED_PATH, "content": PLANTED}))
    assert found(body) == PLANTED_RULES
    assert body["commit"] == indexed.head
    assert body["files_analyzed"] == 1
    assert body["audit_id"]
    naming = next(f for f in body["findings"] if f["rule"] == "naming.case.function")
    assert naming["suggestion"] == "load_audit_names"
    assert naming["category"] == "naming"
    assert naming["severity"] == "warning"
    assert naming["id"].startswith("f_")
    assert naming["fingerprint"]
    evidence = naming["evidence"]
    assert evidence["choice"] == "snake_case"
    assert evidence["share"] == 1.0
    assert evidence["count"] >= 100
    assert evidence["scope"]["kind"] in ("language", "repository", "directory", "domain")
    assert "snake_case" in evidence["description"]
    assert evidence["examples"]
    # The repository's own files follow its conventions.
    assert ok(analyze(http, indexed, {"path": "app/billing/invoice.py"}))["findings"] == []
    sarif = ok(analyze(http, indexed, {"path": PLANTED_PATH, "content": PLANTED, "format": "sarif"}))
    assert sarif["version"] == "2.1.0"
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {rule for rule, _ in PLANTED_RULES}


RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
FINDING_FIELDS = {"id", "fingerprint", "rule", "category", "severity", "confidence", "message", "path", "start_line",
                  "end_line", "evidence", "suggestion", "preexisting", "more"}  # fmt: skip
EVIDENCE_FIELDS = {"level", "symbol", "convention", "scope", "choice", "share", "count", "support", "description",
                   "examples", "detail"}  # fmt: skip


def test_analysis_body_is_the_typed_result(http: httpx.Client, indexed: Indexed) -> None:
    """The AnalysisResult message as REST: exactly its fields, counts as integers (docs/review.md)."""
    body = ok(analyze(http, indexed, {"path": PLANTED_PATH, "content": PLANTED}))
    assert set(body) == {"audit_id", "repository_id", "commit", "findings", "files_analyzed", "duration_ms", "skipped",
                         "preexisting", "preexisting_count"}  # fmt: skip
    assert (body["preexisting"], body["preexisting_count"]) == ([], 0)  # one file has no base
    assert type(body["files_analyzed"]) is int
    assert type(body["duration_ms"]) is float
    assert body["skipped"] == []
    for finding in body["findings"]:
        assert set(finding) == FINDING_FIELDS
        assert type(finding["start_line"]) is int
        assert type(finding["end_line"]) is int
        assert type(finding["confidence"]) is float
        assert set(finding["evidence"]) == EVIDENCE_FIELDS
    naming = next(f for f in body["findings"] if f["rule"] == "naming.case.function")
    evidence = naming["evidence"]
    assert evidence["level"] == "strict"
    assert evidence["symbol"] == "loadAuditNames"
    assert evidence["convention"].startswith("naming.case.function@")
    assert set(evidence["scope"]) == {"kind", "value"}
    assert type(evidence["count"]) is int
    assert type(evidence["support"]) is int
    assert type(evidence["share"]) is float
    assert evidence["detail"] == {"name": "loadAuditNames", "style": "camelCase"}
    sarif = ok(analyze(http, indexed, {"path": PLANTED_PATH, "content": PLANTED, "format": "sarif"}))
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in sarif["runs"][0]["results"]]
    assert {type(r["startLine"]) for r in regions} == {int}
    assert {r["ruleIndex"] for r in sarif["runs"][0]["results"]} <= set(range(len(PLANTED_RULES)))


def test_analysis_errors(system: RunningSystem, http: httpx.Client, indexed: Indexed) -> None:
    assert_error(analyze(http, indexed, {"path": "app/nowhere.py"}), 404, "file_not_found")
    assert_error(analyze(http, indexed, {"path": "logo.png", "content": "\u0000PNG"}), 422, "unsupported_file_type")
    stranger = {"Authorization": f"Bearer {admin_token(system, 'review-stranger')}"}
    assert_error(analyze(http, indexed, {"path": PLANTED_PATH, "content": PLANTED}, stranger), 404, "repo_not_found")
    assert_error(analyze(http, indexed, {"path": "../../etc/passwd"}), 422, "validation_failed")
    huge = analyze(http, indexed, {"path": "app/huge.py", "content": "x = 1\n" * 200_000})  # 1.2 MB
    assert assert_error(huge, 422, "unsupported_file_type")["details"]["reason"] == "oversized"
    assert_error(analyze(http, indexed, {"path": PLANTED_PATH, "format": "xml"}), 422, "validation_failed")
    url = f"/v1/repositories/{indexed.repo_id}/analyze"
    json_auth = {**indexed.auth, "content-type": "application/json"}
    assert_error(http.post(url, content=b'{"path": ', headers=json_auth), 400, "bad_request")
    pr = f"/v1/repositories/{indexed.repo_id}/analyze_pr"
    assert_error(request(http, "POST", pr, indexed.auth, json={}), 422, "validation_failed")


def test_staged_changeset_reports_its_changes(http: httpx.Client, indexed: Indexed) -> None:
    url = f"/v1/repositories/{indexed.repo_id}/review_changeset"
    (indexed.path / PLANTED_PATH).write_text(PLANTED)
    git(indexed.path, "add", PLANTED_PATH)
    try:
        staged = ok(request(http, "POST", url, indexed.auth, json={}))
        # A new module where the repository tests every module: a change-level finding too.
        assert found(staged) == PLANTED_RULES | {("structure.tests.coverage", 0)}
        diff = git(indexed.path, "diff", "--cached") + "\n"
        from_diff = ok(request(http, "POST", url, indexed.auth, json={"diff": diff}))
        assert found(from_diff) == found(staged)
    finally:
        git(indexed.path, "reset", "-q", "--", PLANTED_PATH)
        (indexed.path / PLANTED_PATH).unlink()
    assert_error(request(http, "POST", url, indexed.auth, json={}), 400, "no_files")


def test_pull_request_reports_only_changed_lines(http: httpx.Client, indexed: Indexed) -> None:
    path = indexed.path
    git(path, "checkout", "-q", "-b", "feature")
    try:
        target = path / "app" / "billing" / "invoice.py"
        text = target.read_text()
        added = '\n\ndef voidInvoice(invoice_id: str) -> str:\n    """Void one invoice."""\n    return invoice_id\n'
        target.write_text(text + added)
        git(path, "commit", "-q", "-am", "void invoices")
        head = git(path, "rev-parse", "HEAD")
    finally:
        git(path, "checkout", "-q", "main")
    line = text.count("\n") + 3  # the new def
    url = f"/v1/repositories/{indexed.repo_id}/analyze_pr"
    by_commits = ok(request(http, "POST", url, indexed.auth, json={"base": indexed.head, "head": head}))
    # Only the added function is commented on. invoice.py usually changes with payment.py, but
    # cochange.partner is loose only (docs/review.md), so the pull request is not told.
    assert found(by_commits) == {("naming.case.function", line)}
    new_lines = added.split("\n")[:-1]  # two blank lines and the function, after the old last line
    patch = f"@@ -{line - 3},0 +{line - 2},{len(new_lines)} @@\n" + "".join(f"+{ln}\n" for ln in new_lines)
    files = [{"path": "app/billing/invoice.py", "status": "modified", "patch": patch}]
    by_patch = ok(request(http, "POST", url, indexed.auth, json={"files": files, "pr_number": 3}))
    assert found(by_patch) == found(by_commits)


def _commit(path: Path, message: str, files: dict[str, str | None]) -> str:
    for name, text in files.items():
        if text is None:
            git(path, "rm", "-q", name)
            continue
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
        git(path, "add", name)
    git(path, "commit", "-q", "-m", message)
    return git(path, "rev-parse", "HEAD")


def test_a_pull_request_answers_what_its_base_already_had_apart(http: httpx.Client, indexed: Indexed) -> None:
    """Issue #24's class: old code blamed on a change that only touched its line. An annotation
    edit of an old undocumented function, a camelCase function moved to a new module, and a merge
    that brings such an edit are "already there"; a new camelCase function is the change's."""
    path = indexed.path
    names = PLANTED[PLANTED.index("def loadAuditNames") : PLANTED.index("def count_audit_items")]
    old_def = "def count_audit_items(store: AuditStore) -> int:"
    edited_def = "def count_audit_items(store: AuditStore, /) -> int:"
    git(path, "checkout", "-q", "-b", "legacy")
    try:
        base = _commit(path, "legacy audit module", {PLANTED_PATH: PLANTED})
        split = PLANTED.replace(names, "").replace(old_def, edited_def)
        split += (
            '\n\ndef purgeAudits(store: AuditStore) -> None:\n    """Forget every audit."""\n    store.items.clear()\n'
        )
        moved = '"""Audit names."""\n\nimport logging\n\nfrom app.accounts.audit import AuditStore\n\n'
        moved += "log = logging.getLogger(__name__)\n\n\n" + names.rstrip() + "\n"
        head = _commit(path, "split audit names out", {PLANTED_PATH: split, "app/accounts/audit_names.py": moved})
        # A merge whose second parent re-annotated the old function: first-parent diff is the edit.
        git(path, "checkout", "-q", "-b", "side", base)
        side = _commit(path, "positional store", {PLANTED_PATH: PLANTED.replace(old_def, edited_def)})
        git(path, "checkout", "-q", "legacy")
        git(path, "checkout", "-q", "-b", "merged", base)
        _commit(path, "docs", {"NOTES.md": "notes\n"})
        first_parent = git(path, "rev-parse", "HEAD")
        git(path, "merge", "-q", "--no-ff", "-m", "merge side", side)
        merge = git(path, "rev-parse", "HEAD")
    finally:
        git(path, "checkout", "-q", "main")
    url = f"/v1/repositories/{indexed.repo_id}/analyze_pr"
    body = ok(request(http, "POST", url, indexed.auth, json={"base": base, "head": head, "pr_number": 5}))
    new_def = split.split("\n").index("def purgeAudits(store: AuditStore) -> None:") + 1
    # The split-out module is new, and the repository tests its modules: a change-level finding.
    assert found(body) == {("naming.case.function", new_def), ("structure.tests.coverage", 0)}
    already = {(f["path"], f["rule"], f["evidence"]["symbol"]) for f in body["preexisting"]}
    assert already >= {
        (PLANTED_PATH, "documentation.docstring.function", "count_audit_items"),
        ("app/accounts/audit_names.py", "naming.case.function", "loadAuditNames"),
    }
    assert body["preexisting_count"] == len(body["preexisting"])
    assert all(f["preexisting"] for f in body["preexisting"])
    assert not any(f["preexisting"] for f in body["findings"])
    sarif = ok(request(http, "POST", url, indexed.auth, json={"base": base, "head": head, "format": "sarif"}))
    states = [r["baselineState"] for r in sarif["runs"][0]["results"]]
    assert (states.count("new"), states.count("unchanged")) == (2, body["preexisting_count"])

    merged = ok(request(http, "POST", url, indexed.auth, json={"base": first_parent, "head": merge}))
    assert found(merged) == set()
    assert [(f["rule"], f["evidence"]["symbol"]) for f in merged["preexisting"]] == [
        ("documentation.docstring.function", "count_audit_items")
    ]


def test_dismissals_take_effect_and_show_on_the_dashboard(http: httpx.Client, indexed: Indexed) -> None:
    before = ok(analyze(http, indexed, {"path": PLANTED_PATH, "content": PLANTED}))
    by_rule = {f["rule"]: f for f in before["findings"]}
    report = {
        "feedback": [
            {"finding_id": by_rule["idioms.print"]["id"], "verdict": "dismissed", "comment": "a CLI helper"},
            {"fingerprint": by_rule["naming.case.function"]["fingerprint"], "verdict": "accepted"},
        ],
        "findings": [
            {"category": "sql-injection", "path": "app/reports/order.py", "start_line": 3, "message": "raw SQL"}
        ],
    }
    reply = ok(request(http, "POST", f"/v1/repositories/{indexed.repo_id}/report_findings", indexed.auth, json=report))
    assert (reply["recorded"], reply["accepted"], reply["verdicts"]) == (2, 1, {"dismissed": 1, "accepted": 1})
    assert reply["external"] == 1
    assert set(reply["calibration"]) == {"rules", "suppressed_fingerprints", "unknown_findings", "report_conventions"}
    assert type(reply["calibration"]["suppressed_fingerprints"]) is int
    rates = {r["rule"]: r["false_positive_rate"] for r in reply["calibration"]["rules"]}
    assert rates == {"idioms.print": 1.0, "naming.case.function": 0.0}
    after = ok(analyze(http, indexed, {"path": PLANTED_PATH, "content": PLANTED}))
    assert found(after) == PLANTED_RULES - {("idioms.print", 39)}

    board = ok(request(http, "GET", f"/v1/repositories/{indexed.repo_id}/dashboard", indexed.auth))
    assert RFC3339.fullmatch(board["model"]["learned_at"])
    assert RFC3339.fullmatch(board["audits"]["last_at"])
    assert type(board["findings"]["total"]) is int
    assert board["index"]["state"] == "ready"
    assert board["index"]["head_sha"] == indexed.head
    assert board["findings"]["total"] >= 6
    assert board["findings"]["over_time"]
    assert {a["rule"]: a["false_positive_rate"] for a in board["acceptance"]} == rates
    assert board["false_positive_rate"] == 0.5
    assert board["strongest_conventions"]

    context = ok(
        request(
            http,
            "POST",
            f"/v1/repositories/{indexed.repo_id}/review_context",
            indexed.auth,
            json={"path": "app/reports/order.py"},
        )
    )
    assert context["domain"]
    assert context["language"] == "python"
    assert {"naming.case.function", "formatting.indent.unit"} <= {c["rule"] for c in context["conventions"]}
    assert context["history"]["reports"]["external"][0]["message"] == "raw SQL"
    assert context["history"]["file"]["file"]["commits"] >= 1


def test_review_context_body_is_the_typed_context(http: httpx.Client, indexed: Indexed) -> None:
    """The ReviewContext message as REST: exactly its fields, counts as integers, times RFC 3339."""
    url = f"/v1/repositories/{indexed.repo_id}/review_context"
    ok(analyze(http, indexed, {"path": PLANTED_PATH, "content": PLANTED}))
    context = ok(request(http, "POST", url, indexed.auth, json={"path": "app/billing/invoice.py"}))
    assert set(context) == {
        "repository_id",
        "commit",
        "path",
        "language",
        "domain",
        "segment",
        "conventions",
        "history",
    }
    assert context["language"] == "python"
    assert set(context["domain"]) == {"name", "path_prefix", "file_count", "test_file_count", "line_count", "languages"}
    assert context["domain"]["name"] == "billing"
    assert type(context["domain"]["file_count"]) is int
    assert set(context["segment"]) == {"domain", "name", "path_prefix", "kind", "file_count"}
    convention = next(c for c in context["conventions"] if c["rule"] == "naming.case.function")
    assert set(convention) == {"id", "rule", "family", "scope", "language", "choice", "share", "count", "support",
                               "level", "confidence", "description", "examples", "source", "alternatives",
                               "declared"}  # fmt: skip
    assert type(convention["count"]) is int
    assert type(convention["share"]) is float
    assert convention["declared"] is None
    history = context["history"]
    assert set(history) == {"file", "co_changes", "findings", "reports"}
    # The indexer's history of the path, as GET .../history?path= answers it.
    assert set(history["file"]) == {"repository_id", "commit", "depth", "commits", "path", "file", "cochanges",
                                    "hot_spot_rank"}  # fmt: skip
    assert history["file"]["path"] == "app/billing/invoice.py"
    assert type(history["file"]["file"]["churn"]) is int
    assert RFC3339.fullmatch(history["file"]["file"]["last_timestamp"])
    assert set(history["reports"]) == {"feedback", "external"}
    planted = ok(request(http, "POST", url, indexed.auth, json={"path": PLANTED_PATH}))
    [past, *_] = planted["history"]["findings"]
    assert set(past) == {"id", "fingerprint", "rule", "category", "severity", "confidence", "message", "path",
                         "start_line", "end_line", "suggestion", "audit_id", "created_at", "verdict"}  # fmt: skip
    assert RFC3339.fullmatch(past["created_at"])
    assert type(past["start_line"]) is int
    unknown = ok(request(http, "POST", url, indexed.auth, json={"path": "docs/notes.unknownext"}))
    assert unknown["language"] is None


def test_global_context_audit_results_and_the_deprecated_alias(http: httpx.Client, indexed: Indexed) -> None:
    glob = ok(request(http, "GET", f"/v1/repositories/{indexed.repo_id}/global_context", indexed.auth))
    assert RFC3339.fullmatch(glob["learned_at"])
    assert type(glob["lines"]) is int
    assert set(glob["history"]) == {"commits"}
    assert set(glob["config"]) == {"file", "present", "errors", "declared"}
    assert glob["languages"][0]["language"] == "python"
    assert glob["files"] >= 90
    assert glob["conventions"]["strict"] >= 20
    assert glob["strongest_conventions"]
    assert glob["domains"]
    results = request(http, "GET", "/v1/audit-results", indexed.auth, params={"limit": 5})
    body = ok(results)
    assert len(body["audits"]) == 5
    assert RFC3339.fullmatch(body["audits"][0]["created_at"])
    assert body["audits"][0]["pr_number"] is None or type(body["audits"][0]["pr_number"]) is int
    assert body["audits"][0]["repository_id"] == indexed.repo_id
    assert body["fleet"]["learned"] == 1
    assert any(
        c["rule"] == "naming.case.function" and c["majority"] == "snake_case" for c in body["fleet"]["conventions"]
    )
    assert "deprecation" not in results.headers
    alias = request(http, "GET", "/v1/account/audit-results", indexed.auth, params={"limit": 5})
    assert ok(alias)["fleet"] == body["fleet"]
    assert alias.headers["deprecation"] == "true"
    assert alias.headers["sunset"]
    assert 'rel="successor-version"' in alias.headers["link"]


def test_every_analysis_counts_as_usage(http: httpx.Client, indexed: Indexed) -> None:
    """analysis.completed leaves the analyzer's outbox and billing counts one unit per audit."""
    audits = ok(request(http, "GET", "/v1/audit-results", indexed.auth, params={"limit": 500}))["audits"]
    deadline = time.monotonic() + 30
    used = 0
    while time.monotonic() < deadline:
        usage = ok(request(http, "GET", "/v1/account/usage", indexed.auth))
        used = usage["usage"]["analyses"]["used"]
        if used >= len(audits):
            break
        time.sleep(0.5)
    assert used >= len(audits) > 0
    # Repositories are counted by the indexer, the same on both routes that report usage.
    status = ok(request(http, "GET", "/v1/account/status", indexed.auth))
    assert usage["usage"]["repositories"]["used"] == status["usage"]["repositories"]["used"] >= 1
    assert usage["usage"]["repositories"]["remaining"] == status["usage"]["repositories"]["remaining"]


def test_preferences_apply_to_every_analysis(http: httpx.Client, indexed: Indexed) -> None:
    url = "/v1/account/audit-preferences"
    defaults = ok(request(http, "GET", url, indexed.auth))
    assert defaults["min_severity"] == "info"
    assert defaults["ignored_paths"] == []
    assert defaults["updated_at"] is None  # the defaults: never updated
    updated = ok(request(http, "PATCH", url, indexed.auth, json={"min_severity": "warning"}))
    assert updated["min_severity"] == "warning"
    assert RFC3339.fullmatch(updated["updated_at"]), updated
    body = ok(analyze(http, indexed, {"path": PLANTED_PATH, "content": PLANTED}))
    assert ("documentation.docstring.function", 32) not in found(body)
    assert_error(request(http, "PATCH", url, indexed.auth, json={"min_severity": "loud"}), 422, "validation_failed")
    assert ok(request(http, "PATCH", url, indexed.auth, json={"min_severity": None}))["min_severity"] == "info"


def wait_learned(http: httpx.Client, repo_id: str, head: str, auth: dict[str, str], seconds: float = 120) -> None:
    """Until index/status shows the analyzer's model at ``head`` (asking never makes it learn)."""
    deadline = time.monotonic() + seconds
    status: dict = {}
    while time.monotonic() < deadline:
        status = ok(request(http, "GET", f"/v1/repositories/{repo_id}/index/status", auth))
        if status["model_commit"] == head:
            return
        time.sleep(0.3)
    raise AssertionError(f"{head} was not learned: {status}")


def test_an_analyzer_down_and_back_loses_no_indexed_event(system: RunningSystem, http: httpx.Client) -> None:
    """The analyzer is killed; meanwhile the repository is indexed again. Reviews answer 503 in the
    error shape while it is down; back up, it learns the new snapshot from the event it missed
    (a durable consumer) and reviews against it."""
    auth = {"Authorization": f"Bearer {admin_token(system, 'restarter')}"}
    path = system.work / "repos" / "restart"  # type: ignore[attr-defined]
    first = make_git_repo(path)
    repo_id = ok(request(http, "POST", "/v1/repositories", auth, json={"path": str(path)}), 201)["id"]
    ok(request(http, "POST", f"/v1/repositories/{repo_id}/index_repo", auth), 202)
    wait_learned(http, repo_id, first, auth)

    system.kill("analyzer")
    extra = '"""More accounts."""\n\n\ndef total_of(items):\n    return sum(items)\n'
    (path / "app" / "accounts" / "extra.py").write_text(extra)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "add extra")
    second = git(path, "rev-parse", "HEAD")
    ok(request(http, "POST", f"/v1/repositories/{repo_id}/index_repo", auth), 202)
    deadline = time.monotonic() + 120
    while (status := ok(request(http, "GET", f"/v1/repositories/{repo_id}/index/status", auth)))["head_sha"] != second:
        assert time.monotonic() < deadline, "the second index did not finish"
        time.sleep(0.3)
    assert status["state"] == "ready"
    assert status["model_commit"] is None  # the analyzer cannot say while it is down
    planted = {"path": PLANTED_PATH, "content": PLANTED}
    down = request(http, "POST", f"/v1/repositories/{repo_id}/analyze", auth, json=planted)
    assert_error(down, 503, "service_unavailable")

    system.start_process("analyzer")
    system.wait_ready()
    wait_learned(http, repo_id, second, auth)
    body = ok(analyze(http, Indexed(repo_id, path, second, auth), planted))
    assert found(body) == PLANTED_RULES
