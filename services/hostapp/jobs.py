"""PR job rules shared by the webhook handler, the worker, the index-event consumer and the
reconciler: a job row and its AnalyzePrJob message are always written in one transaction."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import events_pb2
from services.hostapp import queries
from services.hostapp.models import PrJob, now_ms, outbox
from services.kit.bus import SUBJECT_PR_JOB
from services.kit.outbox import add_event

JOB_EVENT_TYPE = "analyze_pr.requested"


@dataclass(frozen=True)
class Enqueued:
    job_id: str
    created: bool  # False: an unfinished job for this PR head already existed


def job_message(job: PrJob | None = None, **fields: object) -> events_pb2.AnalyzePrJob:
    if job is not None:
        fields = {
            "job_id": job.id,
            "installation_id": job.installation_id,
            "repo_full_name": job.repo_full_name,
            "pr_number": job.pr_number,
            "head_sha": job.head_sha,
        }
    return events_pb2.AnalyzePrJob(**fields)  # type: ignore[arg-type]


async def enqueue(
    session: AsyncSession,
    installation_id: int,
    full_name: str,
    pr_number: int,
    head_sha: str,
    delivery_id: str,
    *,
    rerun: bool = False,
) -> Enqueued:
    """A job per PR head among unfinished jobs: a second delivery of the same head is a no-op."""
    job_id = await queries.insert_job(session, installation_id, full_name, pr_number, head_sha, delivery_id, rerun)
    if job_id is None:
        existing = await queries.unfinished_job(session, installation_id, full_name, pr_number, head_sha)
        return Enqueued(existing.id if existing else "", False)
    message = job_message(
        job_id=job_id,
        installation_id=installation_id,
        repo_full_name=full_name,
        pr_number=pr_number,
        head_sha=head_sha,
    )
    await add_event(session, outbox, SUBJECT_PR_JOB, JOB_EVENT_TYPE, message)
    return Enqueued(job_id, True)


async def requeue(session: AsyncSession, job: PrJob) -> None:
    """Back to the queue with a fresh message (the old one is gone or was acknowledged)."""
    await queries.update_job(session, job.id, state="queued", lease_until=0)
    await add_event(session, outbox, SUBJECT_PR_JOB, JOB_EVENT_TYPE, job_message(job))


async def finish(
    session: AsyncSession, job_id: str, state: str, *, conclusion: str = "", summary: str = "", **extra: object
) -> None:
    await queries.update_job(
        session,
        job_id,
        state=state,
        conclusion=conclusion,
        summary=summary[:4000],
        lease_until=0,
        finished_at=now_ms(),
        **extra,
    )
