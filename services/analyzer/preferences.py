"""Audit preferences of a user or an organization, applied by every analysis of its repositories.

The document (``docs/review.md``)::

    {"enabled_families": [...], "min_severity": "info", "min_confidence": 0.0,
     "ignored_paths": ["vendor/**"], "disabled_rules": ["naming.case.parameter"]}

Updated with a JSON merge patch (RFC 7386): a field set to ``null`` returns to its default.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy.ext.asyncio import AsyncSession

from services.analyzer import queries
from services.analyzer.deps import Deps
from services.analyzer.engine import CheckPrefs, RepoConfig
from services.analyzer.engine.config import FAMILIES
from services.contracts.v1 import analyzer_pb2
from services.kit.errors import ServiceError
from services.kit.identity import can_access_owner, current_principal, require_principal
from services.kit.messages import timestamp_of_ms

SEVERITIES = ("info", "warning", "error")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
DEFAULTS: dict[str, Any] = {
    "enabled_families": sorted(FAMILIES),
    "min_severity": "info",
    "min_confidence": 0.0,
    "ignored_paths": [],
    "disabled_rules": [],
}
_MAX_LIST = 500


@dataclass(frozen=True)
class Effective:
    """Preferences in the form an analysis applies them."""

    families: frozenset[str]
    min_severity: str
    min_confidence: float
    ignored: RepoConfig  # reuses the engine's gitignore-like globs
    disabled_rules: tuple[str, ...]

    def check_prefs(self, level: str) -> CheckPrefs:
        families = None if self.families >= FAMILIES else self.families
        return CheckPrefs(level=level, min_confidence=self.min_confidence, families=families)

    def keeps(self, rule: str, severity: str, confidence: float, path: str) -> bool:
        if SEVERITY_RANK.get(severity, 0) < SEVERITY_RANK[self.min_severity]:
            return False
        if confidence < self.min_confidence:
            return False
        if any(rule == d or rule.startswith(d + ".") for d in self.disabled_rules):
            return False
        return not self.ignored.is_ignored(path)

    def ignores_path(self, path: str) -> bool:
        return self.ignored.is_ignored(path)


def effective(document: dict[str, Any]) -> Effective:
    doc = {**DEFAULTS, **document}
    return Effective(
        families=frozenset(doc["enabled_families"]),
        min_severity=doc["min_severity"],
        min_confidence=float(doc["min_confidence"]),
        ignored=RepoConfig(ignore=tuple(doc["ignored_paths"])),
        disabled_rules=tuple(doc["disabled_rules"]),
    )


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


def _invalid(field: str, reason: str) -> ServiceError:
    return ServiceError("validation_failed", f"{field}: {reason}", {"field": field, "reason": reason})


def _string_list(doc: dict[str, Any], field: str) -> list[str]:
    value = doc[field]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise _invalid(field, "expected a list of non-empty strings")
    if len(value) > _MAX_LIST:
        raise _invalid(field, f"at most {_MAX_LIST} entries")
    return [v.strip() for v in value]


def validate(document: Any) -> dict[str, Any]:
    """The stored form: only known fields, each checked; raises ``validation_failed`` naming the field."""
    if not isinstance(document, dict):
        raise _invalid("body", "expected a JSON object")
    for key in document:
        if key not in DEFAULTS:
            raise _invalid(key, f"unknown field (known: {', '.join(DEFAULTS)})")
    doc = {**DEFAULTS, **document}
    families = _string_list(doc, "enabled_families")
    unknown = sorted(set(families) - FAMILIES)
    if unknown:
        raise _invalid("enabled_families", f"unknown families {unknown} (known: {', '.join(sorted(FAMILIES))})")
    if doc["min_severity"] not in SEVERITIES:
        raise _invalid("min_severity", "expected one of info, warning, error")
    confidence = doc["min_confidence"]
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
        raise _invalid("min_confidence", "expected a number between 0 and 1")
    return {
        "enabled_families": sorted(set(families)),
        "min_severity": doc["min_severity"],
        "min_confidence": float(confidence),
        "ignored_paths": _string_list(doc, "ignored_paths"),
        "disabled_rules": _string_list(doc, "disabled_rules"),
    }


def _authorize(owner: str, min_role: str) -> str:
    principal = require_principal()
    if not owner or ":" not in owner:
        raise _invalid("owner", "expected user:<id> or org:<id>")
    if not can_access_owner(principal, owner, min_role):
        raise ServiceError("forbidden", "not allowed to manage these preferences", {"owner": owner})
    return principal.user_id


def render(owner: str, document: dict[str, Any], updated_at: int, updated_by: str) -> analyzer_pb2.AuditPreferences:
    doc = {**DEFAULTS, **document}
    return analyzer_pb2.AuditPreferences(
        owner=owner,
        enabled_families=doc["enabled_families"],
        min_severity=doc["min_severity"],
        min_confidence=doc["min_confidence"],
        ignored_paths=doc["ignored_paths"],
        disabled_rules=doc["disabled_rules"],
        updated_at=timestamp_of_ms(updated_at),
        updated_by=updated_by,
    )


async def get_document(deps: Deps, owner: str) -> analyzer_pb2.AuditPreferences:
    _authorize(owner, "viewer")
    async with deps.db.session() as session:
        row = await queries.preferences(session, owner)
    if row is None:
        return render(owner, {}, 0, "")
    return render(owner, row.document, row.updated_at, row.updated_by)


async def update_document(deps: Deps, owner: str, patch_json: bytes) -> analyzer_pb2.AuditPreferences:
    # Personal preferences are the user's own; an organization's are its team admins'.
    user_id = _authorize(owner, "team-admin")
    try:
        patch = orjson.loads(patch_json) if patch_json else {}
    except orjson.JSONDecodeError as exc:
        raise _invalid("body", f"not valid JSON: {exc}") from None
    if not isinstance(patch, dict):
        raise _invalid("body", "a merge patch must be a JSON object")
    async with deps.db.session() as session:
        row = await queries.preferences(session, owner)
        current = dict(row.document) if row is not None else {}
        document = validate(merge_patch(current, patch))
        # Store only what differs from the defaults, so a later change of a default reaches everyone.
        stored = {k: v for k, v in document.items() if v != DEFAULTS[k]}
        at = await queries.save_preferences(session, owner, stored, user_id)
    deps.preferences[owner] = (time.monotonic(), effective(stored))
    return render(owner, stored, at, user_id)


async def for_owner(deps: Deps, session: AsyncSession | None, owner: str) -> Effective:
    """The preferences an analysis of ``owner``'s repository applies (cached briefly per owner)."""
    cached = deps.preferences.get(owner)
    if cached is not None and time.monotonic() - cached[0] < deps.settings.preferences_ttl_seconds:
        return cached[1]
    if session is None:
        async with deps.db.session() as own:
            row = await queries.preferences(own, owner)
    else:
        row = await queries.preferences(session, owner)
    prefs = effective(dict(row.document) if row is not None else {})
    deps.preferences[owner] = (time.monotonic(), prefs)
    return prefs


async def refresh_cached(deps: Deps) -> None:
    """Re-read the preferences of every owner held, in one query (the background ``cache_refresh``
    pass), so an analysis after a pause finds them fresh instead of reading them itself."""
    owners = list(deps.preferences)
    if not owners:
        return
    started = time.monotonic()
    async with deps.db.session() as session:
        rows = await queries.preferences_of(session, owners)
        documents = {owner: dict(row.document) for owner, row in rows.items()}
    for owner in owners:
        held = deps.preferences.get(owner)
        if held is None or held[0] < started:  # a PATCH on this replica during the read wins
            deps.preferences[owner] = (time.monotonic(), effective(documents.get(owner, {})))


def caller_id() -> str:
    principal = current_principal()
    return principal.user_id if principal is not None else ""
