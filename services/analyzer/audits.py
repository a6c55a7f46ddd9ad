"""GetAuditResults: recent audits across the caller's repositories and a fleet-wide convention summary.

The gateway passes the ids of the repositories the caller can list; the analyzer still keeps only
those whose owner the caller can see, so the RPC cannot be used to read someone else's audits.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from services.analyzer import queries, views
from services.analyzer.dashboard import WINDOW_DAYS, overall_fp_rate
from services.analyzer.deps import Deps
from services.contracts.v1 import analyzer_pb2
from services.kit.db import now_ms
from services.kit.errors import ServiceError
from services.kit.identity import can_access_owner, user_principal
from services.kit.messages import timestamp_of_ms

DEFAULT_LIMIT = 50
MAX_LIMIT = 500
MAX_REPOSITORIES = 5000


def fleet_conventions(models: list[Any]) -> list[analyzer_pb2.FleetConvention]:
    """Per rule and language: how many repositories enforce it, and which choice they make.

    Counts repositories, not conventions: one repository may enforce a rule several times
    (``vocabulary.term`` once per term), and still counts once for the rule and once for each
    choice it makes, so no count exceeds the fleet's repositories.
    """
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    for m in models:
        for item in (m.summary or {}).get("enforced", []):
            key = (item["rule"], item.get("language", ""))
            entry = by_key.setdefault(
                key, {"rule": key[0], "family": item.get("family", ""), "language": key[1], "choices": {}}
            )
            entry["choices"].setdefault(item["choice"], set()).add(m.id)
    out = []
    for entry in by_key.values():
        holders: dict[str, set[str]] = entry.pop("choices")
        choices = Counter({choice: len(repos) for choice, repos in holders.items()})
        majority, n = sorted(choices.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        total = len(set().union(*holders.values()))
        out.append(
            analyzer_pb2.FleetConvention(
                **entry,
                repositories=total,
                majority=majority,
                agreement=round(n / total, 4),
                choices=dict(sorted(choices.items())),
            )
        )
    return sorted(out, key=lambda e: (-e.repositories, -e.agreement, e.rule, e.language))


async def audit_results(deps: Deps, req: analyzer_pb2.AuditResultsRequest) -> analyzer_pb2.AuditResults:
    limit = req.limit or DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise ServiceError("validation_failed", f"limit must be between 1 and {MAX_LIMIT}", {"field": "limit"})
    requested = list(dict.fromkeys(req.repository_ids))[:MAX_REPOSITORIES]
    principal = user_principal()
    since = now_ms() - WINDOW_DAYS * 86_400_000
    async with deps.db.session() as session:
        owners = await queries.owners(session, requested)
        visible = [
            r for r in requested if r in owners and (principal is None or can_access_owner(principal, owners[r]))
        ]
        audits = await queries.recent_audits(session, visible, limit) if visible else []
        models = await queries.current_models(session, visible) if visible else []
        counts = await queries.audit_counts(session, visible, since) if visible else []
        totals = await queries.finding_totals(session, visible, since) if visible else []
        calibration = await queries.calibration_rows(session, visible) if visible else []
    audits_per_repo: Counter[str] = Counter()
    findings_per_repo: Counter[str] = Counter()
    for repo_id, _kind, n, found, _last in counts:
        audits_per_repo[repo_id] += n
        findings_per_repo[repo_id] += int(found or 0)
    severities: Counter[str] = Counter()
    for _repo_id, severity, n in totals:
        severities[severity] += n
    return analyzer_pb2.AuditResults(
        audits=[views.audit(a) for a in audits],
        fleet=analyzer_pb2.Fleet(
            repositories=len(visible),
            learned=len(models),
            window_days=WINDOW_DAYS,
            audits=sum(audits_per_repo.values()),
            findings_by_severity=dict(severities),
            false_positive_rate=overall_fp_rate(calibration),
            conventions=fleet_conventions(models),
            by_repository=[
                analyzer_pb2.FleetRepository(
                    repository_id=m.id,
                    full_name=m.full_name or None,
                    commit=m.model_commit,
                    learned_at=timestamp_of_ms(m.learned_at),
                    files=m.files,
                    conventions=m.conventions,
                    enforced=m.enforced,
                    audits=audits_per_repo.get(m.id, 0),
                    findings=findings_per_repo.get(m.id, 0),
                )
                for m in models
            ],
        ),
    )
