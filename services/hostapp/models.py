"""The hostapp service's database: installations and their per-repository records,
webhook deliveries, PR analysis jobs, and what hostapp knows of each repository's index."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Identity, Index, Integer, LargeBinary, String, Text, UniqueConstraint, text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from services.kit.db import new_id, now_ms, service_metadata
from services.kit.inbox import define_inbox
from services.kit.outbox import define_outbox


class Base(DeclarativeBase):
    metadata = service_metadata()


outbox = define_outbox(Base.metadata)
inbox = define_inbox(Base.metadata)

# Record statuses (spec: "Host app installation record").
ACTIVE, SUSPENDED, REMOVED = "active", "suspended", "removed"

# PR job states. The first three are "unfinished": at most one job per PR head among them.
QUEUED, RUNNING, WAITING_INDEX = "queued", "running", "waiting_index"
COMPLETED, DROPPED, SUPERSEDED, SKIPPED, FAILED = "completed", "dropped", "superseded", "skipped", "failed"
UNFINISHED = (QUEUED, RUNNING, WAITING_INDEX)


class Installation(Base):
    """One app installation (an account that installed the app)."""

    __tablename__ = "installations"
    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    account_login: Mapped[str] = mapped_column(String(200), default="")
    account_type: Mapped[str] = mapped_column(String(30), default="")
    status: Mapped[str] = mapped_column(String(20), default=ACTIVE)
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    updated_at: Mapped[int] = mapped_column(BigInteger, default=now_ms, onupdate=now_ms)


class InstallationRepository(Base):
    """The spec's installation record: one per repository in an installation."""

    __tablename__ = "installation_repositories"
    __table_args__ = (UniqueConstraint("installation_id", "full_name_key"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    installation_id: Mapped[int] = mapped_column(BigInteger, index=True)
    repo_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    full_name: Mapped[str] = mapped_column(String(300))
    # Repository names are case-insensitive on the code host.
    full_name_key: Mapped[str] = mapped_column(String(300), index=True)
    private: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[str] = mapped_column(String(20), default=ACTIVE)
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    updated_at: Mapped[int] = mapped_column(BigInteger, default=now_ms, onupdate=now_ms)


class WebhookDelivery(Base):
    """Every delivery seen, under its unique X-GitHub-Delivery id (de-duplication, audit).

    Recorded with its payload when it is acknowledged; processed after (``processed_at`` set,
    the payload dropped) by ``deliveries.DeliveryProcessor``."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (Index("ix_webhook_deliveries_unprocessed", "seq", postgresql_where=text("processed_at IS NULL")),)
    delivery_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    event: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(100), default="")
    installation_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    handled: Mapped[bool] = mapped_column(Boolean, default=False)
    outcome: Mapped[str] = mapped_column(String(200), default="")
    job_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    received_at: Mapped[int] = mapped_column(BigInteger, default=now_ms, index=True)
    payload: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True)  # until processed
    processed_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    seq: Mapped[int] = mapped_column(BigInteger, Identity())  # arrival order, for the processor


class PrJob(Base):
    """An AnalyzePrJob and its life; the row, not the NATS message, is the source of truth."""

    __tablename__ = "pr_jobs"
    __table_args__ = (
        # De-duplication by PR head among unfinished jobs (reliability.md, GitHub webhooks).
        Index(
            "uq_pr_jobs_unfinished_head",
            "installation_id",
            "repo_key",
            "pr_number",
            "head_sha",
            unique=True,
            postgresql_where=text("state IN ('queued', 'running', 'waiting_index')"),
        ),
        Index("ix_pr_jobs_repo_key_state", "repo_key", "state"),
        Index("ix_pr_jobs_state_updated_at", "state", "updated_at"),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    installation_id: Mapped[int] = mapped_column(BigInteger)
    repo_full_name: Mapped[str] = mapped_column(String(300))
    repo_key: Mapped[str] = mapped_column(String(300))
    pr_number: Mapped[int] = mapped_column(Integer)
    head_sha: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(20), default=QUEUED)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    lease_until: Mapped[int] = mapped_column(BigInteger, default=0)
    delivery_id: Mapped[str] = mapped_column(String(100), default="")
    check_run_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    review_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    conclusion: Mapped[str] = mapped_column(String(30), default="")
    summary: Mapped[str] = mapped_column(Text, default="")
    findings: Mapped[int] = mapped_column(Integer, default=0)
    comments: Mapped[int] = mapped_column(Integer, default=0)
    annotations: Mapped[int] = mapped_column(Integer, default=0)  # posted so far (a resumed job goes on)
    rerun: Mapped[bool] = mapped_column(Boolean, default=False)  # a person asked for this head again
    superseded_by: Mapped[str] = mapped_column(String(64), default="")
    waiting_since: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    updated_at: Mapped[int] = mapped_column(BigInteger, default=now_ms, onupdate=now_ms)
    finished_at: Mapped[int] = mapped_column(BigInteger, default=0)


class RepositoryIndex(Base):
    """What the indexer's events told us about a repository, so a waiting job and the
    event that releases it cannot miss each other."""

    __tablename__ = "repository_index"
    repo_key: Mapped[str] = mapped_column(String(300), primary_key=True)
    repository_id: Mapped[str] = mapped_column(String(64), default="")
    state: Mapped[str] = mapped_column(String(20))  # ready | failed
    head_sha: Mapped[str] = mapped_column(String(64), default="")
    error: Mapped[str] = mapped_column(Text, default="")
    updated_at: Mapped[int] = mapped_column(BigInteger, default=now_ms, onupdate=now_ms)


class RedeliveryRequest(Base):
    """Failed deliveries the reconciler already asked the code host to redeliver."""

    __tablename__ = "redelivery_requests"
    guid: Mapped[str] = mapped_column(String(100), primary_key=True)
    hook_delivery_id: Mapped[int] = mapped_column(BigInteger)
    requested_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)


# A finding's state on a pull request (docs/hostapp.md, "The life of a finding").
OPEN, FIXED, DISMISSED = "open", "fixed", "dismissed"


class PrFinding(Base):
    """One finding we commented on a pull request, keyed by its fingerprint: the first comment
    and every later state live here, not in a scan of the code host's comments."""

    __tablename__ = "pr_findings"
    __table_args__ = (
        UniqueConstraint("installation_id", "repo_key", "pr_number", "fingerprint"),
        Index("ix_pr_findings_comment_id", "comment_id"),
        Index("ix_pr_findings_pending", "verdict_sent", postgresql_where=text("NOT verdict_sent")),
        Index("ix_pr_findings_state_updated_at", "state", "updated_at"),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    installation_id: Mapped[int] = mapped_column(BigInteger)
    repo_full_name: Mapped[str] = mapped_column(String(300))
    repo_key: Mapped[str] = mapped_column(String(300))
    pr_number: Mapped[int] = mapped_column(Integer)
    fingerprint: Mapped[str] = mapped_column(String(64))
    finding_id: Mapped[str] = mapped_column(String(64), default="")
    rule: Mapped[str] = mapped_column(String(200), default="")
    path: Mapped[str] = mapped_column(String(1000), default="")
    line: Mapped[int] = mapped_column(Integer, default=0)
    state: Mapped[str] = mapped_column(String(20), default=OPEN)  # open | fixed | dismissed
    comment_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    thread_id: Mapped[str] = mapped_column(String(200), default="")  # GraphQL node id, learned when needed
    thread_resolved: Mapped[bool] = mapped_column(Boolean, default=False)
    first_head: Mapped[str] = mapped_column(String(64), default="")
    last_head: Mapped[str] = mapped_column(String(64), default="")  # the last head whose analysis had it
    fixed_by: Mapped[str] = mapped_column(String(64), default="")
    person_resolved_at_head: Mapped[str] = mapped_column(String(64), default="")
    reaction: Mapped[str] = mapped_column(String(20), default="")  # the last reaction verdict read
    # The latest verdict for the analyzer's ReportFindings, and whether it was delivered.
    verdict: Mapped[str] = mapped_column(String(20), default="")
    verdict_comment: Mapped[str] = mapped_column(Text, default="")
    verdict_sent: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    updated_at: Mapped[int] = mapped_column(BigInteger, default=now_ms, onupdate=now_ms)


class IgnoredRule(Base):
    """A rule a person turned off for a repository with a command (``@app ignore <rule>``)."""

    __tablename__ = "ignored_rules"
    repo_key: Mapped[str] = mapped_column(String(300), primary_key=True)
    rule: Mapped[str] = mapped_column(String(200), primary_key=True)
    by_login: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)


class PendingReply(Base):
    """A reply the app owes on a pull request (a command's answer), posted by the feedback
    sender outside the webhook's transaction (the code host waits only 10 s)."""

    __tablename__ = "pending_replies"
    __table_args__ = (Index("ix_pending_replies_unposted", "posted", postgresql_where=text("NOT posted")),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    delivery_id: Mapped[str] = mapped_column(String(100), unique=True)
    installation_id: Mapped[int] = mapped_column(BigInteger)
    repo_full_name: Mapped[str] = mapped_column(String(300))
    pr_number: Mapped[int] = mapped_column(Integer)
    in_reply_to: Mapped[int | None] = mapped_column(BigInteger, nullable=True)  # a review comment, else the PR
    body: Mapped[str] = mapped_column(Text)
    posted: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
