"""The analyzer's database: learned models, audits and findings, feedback, calibration, preferences.

Timestamps are unix milliseconds. Repository ids are the indexer's; the analyzer keeps only what
it needs to authorize and to find a repository's model without asking the indexer.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from services.kit.db import new_id, now_ms, service_metadata
from services.kit.inbox import define_inbox
from services.kit.outbox import define_outbox


class Base(DeclarativeBase):
    metadata = service_metadata()


outbox = define_outbox(Base.metadata)
inbox = define_inbox(Base.metadata)


class Repository(Base):
    """The analyzer's view of an indexed repository, fed by ``repository.indexed`` events."""

    __tablename__ = "repositories"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    full_name: Mapped[str] = mapped_column(String(200), default="", index=True)
    owner: Mapped[str] = mapped_column(String(80), default="")
    head_sha: Mapped[str] = mapped_column(String(64), default="")  # last indexed head seen
    model_id: Mapped[str | None] = mapped_column(String(36), nullable=True)
    model_commit: Mapped[str] = mapped_column(String(64), default="")
    state: Mapped[str] = mapped_column(String(20), default="pending")  # pending | ready | failed
    error: Mapped[str] = mapped_column(Text, default="")
    learned_at: Mapped[int] = mapped_column(BigInteger, default=0)
    updated_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    # Bumped by every change replicas must reload (a new model, feedback, external findings).
    version: Mapped[int] = mapped_column(Integer, default=0)


class ConventionModelRow(Base):
    """One learned model per repository and commit (msgpack of ``engine.ConventionModel``)."""

    __tablename__ = "convention_models"
    __table_args__ = (UniqueConstraint("repository_id", "commit", name="uq_convention_models_repo_commit"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    repository_id: Mapped[str] = mapped_column(String(64), index=True)
    commit: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    files: Mapped[int] = mapped_column(Integer, default=0)
    conventions: Mapped[int] = mapped_column(Integer, default=0)
    enforced: Mapped[int] = mapped_column(Integer, default=0)
    learn_ms: Mapped[float] = mapped_column(Float, default=0.0)
    schema: Mapped[int] = mapped_column(Integer, default=1)
    model: Mapped[bytes] = mapped_column(LargeBinary)
    # Languages, domains, hot spots, counts: what global_context and the fleet view read without
    # decoding the model.
    summary: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)


class Audit(Base):
    """One analysis run (file, pull request or changeset)."""

    __tablename__ = "audits"
    __table_args__ = (Index("ix_audits_repository_created", "repository_id", "created_at"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    repository_id: Mapped[str] = mapped_column(String(64))
    owner: Mapped[str] = mapped_column(String(80), default="")
    user_id: Mapped[str] = mapped_column(String(64), default="")
    kind: Mapped[str] = mapped_column(String(20))  # file | pull_request | changeset
    commit: Mapped[str] = mapped_column(String(64), default="")
    pr_number: Mapped[int] = mapped_column(Integer, default=0)
    files: Mapped[int] = mapped_column(Integer, default=0)
    findings: Mapped[int] = mapped_column(Integer, default=0)
    duration_ms: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms, index=True)
    # Paths, counts by severity and rule, skipped files.
    summary: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)


class FindingRow(Base):
    __tablename__ = "findings"
    __table_args__ = (
        Index("ix_findings_repository_fingerprint", "repository_id", "fingerprint"),
        Index("ix_findings_repository_finding", "repository_id", "finding_id"),
        Index("ix_findings_repository_path", "repository_id", "path"),
        Index("ix_findings_repository_created", "repository_id", "created_at"),
    )
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    audit_id: Mapped[str] = mapped_column(ForeignKey("audits.id", ondelete="CASCADE"), index=True)
    repository_id: Mapped[str] = mapped_column(String(64))
    finding_id: Mapped[str] = mapped_column(String(40))
    fingerprint: Mapped[str] = mapped_column(String(64))
    rule: Mapped[str] = mapped_column(String(160))
    category: Mapped[str] = mapped_column(String(40))
    severity: Mapped[str] = mapped_column(String(10))
    confidence: Mapped[float] = mapped_column(Float)
    message: Mapped[str] = mapped_column(Text)
    path: Mapped[str] = mapped_column(Text)
    start_line: Mapped[int] = mapped_column(Integer)
    end_line: Mapped[int] = mapped_column(Integer)
    evidence: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    suggestion: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)


class FeedbackRow(Base):
    """The latest verdict on one finding (by fingerprint): later reports replace earlier ones."""

    __tablename__ = "feedback"
    __table_args__ = (Index("ix_feedback_repository_rule", "repository_id", "rule"),)
    repository_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    fingerprint: Mapped[str] = mapped_column(String(64), primary_key=True)
    finding_id: Mapped[str] = mapped_column(String(40), default="")
    rule: Mapped[str] = mapped_column(String(160))
    path: Mapped[str] = mapped_column(Text, default="")
    verdict: Mapped[str] = mapped_column(String(20))  # accepted | fixed | dismissed | false_positive
    comment: Mapped[str] = mapped_column(Text, default="")
    user_id: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    updated_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)


class ExternalFindingRow(Base):
    """A finding reported by another reviewer or tool; joins the file's history."""

    __tablename__ = "external_findings"
    __table_args__ = (Index("ix_external_findings_repository_path", "repository_id", "path"),)
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    repository_id: Mapped[str] = mapped_column(String(64), index=True)
    rule: Mapped[str] = mapped_column(String(160), default="")
    category: Mapped[str] = mapped_column(String(160), default="")
    path: Mapped[str] = mapped_column(Text)
    start_line: Mapped[int] = mapped_column(Integer, default=0)
    end_line: Mapped[int] = mapped_column(Integer, default=0)
    message: Mapped[str] = mapped_column(Text)
    source: Mapped[str] = mapped_column(String(200), default="")
    user_id: Mapped[str] = mapped_column(String(64), default="")
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)


class RuleCalibrationRow(Base):
    """Per repository and rule: what reports say, and what the engine made of it."""

    __tablename__ = "rule_calibration"
    repository_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    rule: Mapped[str] = mapped_column(String(160), primary_key=True)
    state: Mapped[str] = mapped_column(String(20), default="normal")  # normal | downgraded | muted
    reported: Mapped[int] = mapped_column(Integer, default=0)
    accepted: Mapped[int] = mapped_column(Integer, default=0)
    fixed: Mapped[int] = mapped_column(Integer, default=0)
    dismissed: Mapped[int] = mapped_column(Integer, default=0)
    false_positive: Mapped[int] = mapped_column(Integer, default=0)
    false_positive_rate: Mapped[float] = mapped_column(Float, default=0.0)
    confidence_factor: Mapped[float] = mapped_column(Float, default=1.0)
    updated_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)


class Preferences(Base):
    """Audit preferences of a user or an organization (``user:<id>`` / ``org:<id>``)."""

    __tablename__ = "audit_preferences"
    owner: Mapped[str] = mapped_column(String(80), primary_key=True)
    document: Mapped[dict[str, Any]] = mapped_column(JSONB, default=dict)
    updated_by: Mapped[str] = mapped_column(String(64), default="")
    updated_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
