"""The analyzer's settings (``CR_ANALYZER_*``, then the shared ``CR_*``)."""

from __future__ import annotations

from typing import ClassVar

from services.kit.settings import ServiceSettings


class AnalyzerSettings(ServiceSettings):
    service_name: ClassVar[str] = "analyzer"

    # Files larger than this are ``unsupported_file_type`` (the indexer skips them with the same bound).
    max_file_bytes: int = 1_000_000
    # How often a replica re-reads a repository's model version from the database, so a model
    # learned or a report calibrated on another replica is picked up without an event per replica.
    cache_revalidate_seconds: float = 2.0
    # Preferences are read at most this often per owner (PATCH on this replica applies at once).
    preferences_ttl_seconds: float = 2.0
    # A learning run streams every fact of a snapshot; it may take a while on large repositories.
    learn_timeout_seconds: float = 600.0
    # Repositories whose last learned snapshot's facts a replica keeps, so that learning after a
    # re-index decodes only the files whose facts changed (snapshot_facts.py); 0 keeps none.
    facts_cache_repositories: int = 2
    # ...and at most this many files in all (about 15 KB each: 40,000 is ~0.6 GB); a repository
    # larger than that is learned by a full decode each time. 0: no bound but the count above.
    facts_cache_files: int = 40_000
    # Redelivery of an event whose replica died (handlers heartbeat while they run).
    event_ack_wait_seconds: float = 30.0
    # Findings stored per audit; the rest are counted in the audit but not kept row by row.
    max_stored_findings_per_audit: int = 2000
    # Change-level and per-file findings are capped per file by the engine; this caps a whole PR.
    max_findings_per_analysis: int = 1000
    # Refuse analyses beyond the owner's plan (billing's CheckQuota), remembering each answer this long.
    enforce_quota: bool = True
    quota_cache_seconds: float = 30.0
    # The tool name written into SARIF logs.
    sarif_tool_name: str = "codereview"


def load() -> AnalyzerSettings:
    return AnalyzerSettings()
