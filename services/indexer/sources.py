"""Where a repository's git data comes from: a vetted local path, a vetted clone URL, or a
hosted repository cloned with a short-lived installation token from the hostapp service."""

from __future__ import annotations

import asyncio
import posixpath
import shutil
from dataclasses import dataclass
from pathlib import Path

import grpc

from services.contracts.v1 import hostapp_pb2, hostapp_pb2_grpc
from services.indexer.git import (
    CloneUrl,
    GitError,
    LocalRepository,
    validate_clone_url,
    validate_local_repository,
)
from services.indexer.git.errors import PATH_NOT_ALLOWED
from services.indexer.git.readers import READERS
from services.indexer.models import Repository
from services.indexer.settings import IndexerSettings
from services.kit.errors import ServiceError
from services.kit.grpc_client import RemoteError, call, make_channel


@dataclass(frozen=True)
class Source:
    location: LocalRepository | CloneUrl
    token: str | None = None


def input_error(field: str, exc: GitError) -> ServiceError:
    return ServiceError("validation_failed", exc.message, {"field": field, "reason": exc.code})


async def check_local(settings: IndexerSettings, path: str, owner: str) -> LocalRepository:
    """A local repository ``owner`` may register: under the roots the operator allowed it."""
    roots = settings.roots(owner)
    if not roots:
        raise ServiceError(
            "validation_failed",
            "local repositories are disabled for this account (no allowed roots configured)",
            {"field": "path", "reason": "path_not_allowed", "allowed_roots": []},
        )
    if ".." in Path(path).parts:
        # Refused before any resolution: a path that needs ".." is not what the user means.
        raise ServiceError("validation_failed", "path must not contain '..'", {"field": "path", "reason": "dot_dot"})
    try:
        return await asyncio.to_thread(validate_local_repository, path, roots)
    except GitError as exc:
        error = input_error("path", exc)
        if exc.code == PATH_NOT_ALLOWED:
            error.details["allowed_roots"] = roots
        raise error from None


async def check_url(settings: IndexerSettings, url: str) -> CloneUrl:
    try:
        # DNS resolution blocks: off the event loop.
        return await asyncio.to_thread(
            validate_clone_url,
            url,
            allowed_schemes=settings.url_schemes(),
            allow_private_hosts=settings.allow_private_hosts,
            allowed_origins=settings.clone_origins(),
        )
    except GitError as exc:
        raise input_error("url", exc) from None


def name_from_url(url: str) -> str:
    tail = posixpath.basename(url.rstrip("/"))
    return tail[:-4] if tail.endswith(".git") else tail or url


class HostApp:
    """The hostapp client, for clone credentials of hosted repositories."""

    def __init__(self, settings: IndexerSettings) -> None:
        self.settings = settings
        self._channel: grpc.aio.Channel | None = None
        self._stub: hostapp_pb2_grpc.HostAppServiceAsyncStub | None = None

    def stub(self) -> hostapp_pb2_grpc.HostAppServiceAsyncStub:
        if self._stub is None:
            self._channel = make_channel(
                self.settings.hostapp_addr, hostapp_pb2.DESCRIPTOR.services_by_name["HostAppService"]
            )
            self._stub = hostapp_pb2_grpc.HostAppServiceStub(self._channel)
        return self._stub

    async def clone_credentials(self, full_name: str) -> hostapp_pb2.CloneCredentials:
        try:
            return await call(
                self.stub().GetCloneCredentials,
                hostapp_pb2.CloneCredentialsRequest(full_name=full_name),
                timeout=self.settings.hostapp_timeout_seconds,
            )
        except RemoteError as exc:
            if exc.status == grpc.StatusCode.UNIMPLEMENTED and exc.code in ("internal_error", "not_implemented"):
                # The method itself is missing (an older hostapp); not_configured passes through.
                raise ServiceError(
                    "not_implemented",
                    "the hostapp service cannot issue clone credentials yet, so hosted repositories cannot be cloned",
                    {"full_name": full_name},
                ) from None
            if exc.status == grpc.StatusCode.NOT_FOUND:
                raise ServiceError(
                    "repo_not_found", "the host app is not installed on this repository", {"repo": full_name}
                ) from None
            if exc.status in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise ServiceError("upstream_error", "the hostapp service is unavailable") from None
            raise

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()


async def source_for(repo: Repository, settings: IndexerSettings, hostapp: HostApp) -> Source:
    """Re-validated at every index: roots, DNS answers and installations change."""
    if repo.kind == "local":
        return Source(await check_local(settings, repo.source, repo.owner))
    if repo.kind == "url":
        return Source(await check_url(settings, repo.source))
    creds = await hostapp.clone_credentials(repo.full_name or repo.source)
    schemes = tuple(dict.fromkeys(("https", *settings.url_schemes())))
    try:
        url = await asyncio.to_thread(
            validate_clone_url,
            creds.clone_url,
            allowed_schemes=schemes,
            allow_private_hosts=settings.allow_private_hosts,
            allowed_origins=settings.clone_origins(),
            any_port=True,  # the code host's address is the operator's own configuration
        )
    except GitError as exc:
        raise input_error("clone_url", exc) from None
    return Source(url, creds.token or None)


def mirror_path(settings: IndexerSettings, repo_id: str) -> Path:
    return settings.mirrors_dir() / f"{repo_id}.git"


def remove_mirror(settings: IndexerSettings, repo_id: str) -> None:
    path = mirror_path(settings, repo_id)
    READERS.forget(str(path))
    shutil.rmtree(path, ignore_errors=True)
    history_cache(settings, repo_id).unlink(missing_ok=True)
    (path.parent / f".{path.name}.lock").unlink(missing_ok=True)


def history_cache(settings: IndexerSettings, repo_id: str) -> Path:
    return settings.mirrors_dir() / f"{repo_id}.history"
