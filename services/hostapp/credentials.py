"""Clone credentials for an installed repository: an https clone URL and a short-lived
installation token (the indexer hands the token to git through a credential helper)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from services.contracts.v1 import hostapp_pb2
from services.hostapp import queries
from services.hostapp.github import GitHubApp, GitHubError
from services.hostapp.models import ACTIVE, SUSPENDED, Installation, InstallationRepository
from services.kit.db import Database
from services.kit.errors import ServiceError


def _valid_full_name(full_name: str) -> bool:
    owner, sep, name = full_name.partition("/")
    return bool(sep and owner and name and "/" not in name and not full_name.startswith("-"))


async def active_record(session: AsyncSession, full_name: str) -> tuple[InstallationRepository, Installation | None]:
    """The repository's live installation record, or the reason there is none."""
    if not _valid_full_name(full_name):
        raise ServiceError("bad_request", "expected owner/repo", {"field": "full_name"})
    records = await queries.records_for(session, full_name)
    if not records:
        raise ServiceError(
            "repo_not_found", f"{full_name} is not installed for the code-host app", {"reason": "not_installed"}
        )
    record = records[0]  # active first
    installation = await queries.installation(session, record.installation_id)
    if record.status == SUSPENDED or (installation is not None and installation.status == SUSPENDED):
        raise ServiceError(
            "forbidden",
            f"the code-host app installation for {full_name} is suspended",
            {"reason": "suspended", "installation_id": record.installation_id},
        )
    if record.status != ACTIVE:
        raise ServiceError(
            "repo_not_found",
            f"{full_name} was removed from the code-host app installation",
            {"reason": "removed", "installation_id": record.installation_id},
        )
    return record, installation


async def installation_record(db: Database, full_name: str) -> hostapp_pb2.InstallationRecord:
    if not _valid_full_name(full_name):
        raise ServiceError("bad_request", "expected owner/repo", {"field": "full_name"})
    async with db.session() as session:
        records = await queries.records_for(session, full_name)
        if not records:
            raise ServiceError("repo_not_found", f"{full_name} is not installed for the code-host app")
        record = records[0]
        installation = await queries.installation(session, record.installation_id)
    return hostapp_pb2.InstallationRecord(
        installation_id=record.installation_id,
        full_name=record.full_name,
        status=record.status,
        account_login=installation.account_login if installation else "",
    )


async def issue(db: Database, github: GitHubApp, full_name: str) -> hostapp_pb2.CloneCredentials:
    """``GetCloneCredentials``: the record is read in a unit of work that ends before the code
    host is asked for a token (no transaction is held across a remote call)."""
    async with db.session() as session:
        record, _ = await active_record(session, full_name)
    return await clone_credentials(github, record)


async def clone_credentials(github: GitHubApp, record: InstallationRepository) -> hostapp_pb2.CloneCredentials:
    try:
        token = await github.installation_token(record.installation_id)
    except GitHubError as exc:
        if exc.transient:
            raise ServiceError("upstream_error", "the code host did not issue a token; retry later") from None
        raise ServiceError(
            "forbidden",
            "the code host refused an installation token",
            {"reason": "token_refused", "status": exc.status, "installation_id": record.installation_id},
        ) from None
    return hostapp_pb2.CloneCredentials(
        clone_url=f"{github.settings.web_url()}/{record.full_name}.git",
        token=token.token,
        expires_at=token.expires_at,
        installation_id=record.installation_id,
    )
