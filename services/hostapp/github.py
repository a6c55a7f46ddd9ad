"""The code host's REST API through PyGithub, as the app (JWT) and as an installation.

PyGithub is synchronous, so every call runs in a worker thread. The base URL is a setting
(GitHub Enterprise Server: ``https://HOST/api/v3``). Installation tokens are cached per
installation until shortly before they expire.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException, GithubIntegration, RateLimitExceededException
from urllib3.util.retry import Retry

from services.hostapp.settings import HostAppSettings
from services.kit.errors import ServiceError

T = TypeVar("T")
TOKEN_REFRESH_MARGIN_SECONDS = 300  # a token handed out must survive a clone or a job


class GitHubError(Exception):
    """A failed call to the code host; ``transient`` failures are worth retrying."""

    def __init__(self, status: int, message: str, *, transient: bool) -> None:
        super().__init__(f"code host answered {status}: {message}" if status else message)
        self.status = status
        self.transient = transient


@dataclass(frozen=True)
class InstallationToken:
    token: str
    expires_at: int  # unix seconds


@dataclass(frozen=True)
class PullInfo:
    number: int
    state: str  # open | closed
    head_sha: str
    base_sha: str


@dataclass(frozen=True)
class ChangedFile:
    path: str
    status: str
    patch: str


@dataclass(frozen=True)
class ReviewComment:
    id: int
    body: str
    path: str
    line: int


@dataclass(frozen=True)
class ReviewThread:
    id: str  # GraphQL node id
    resolved: bool
    first_comment_id: int


@dataclass(frozen=True)
class Reaction:
    content: str  # +1, -1, laugh, ...
    login: str
    bot: bool
    created_at: int  # unix seconds


THREADS_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes { id isResolved comments(first: 1) { nodes { databaseId } } }
      }
    }
  }
}
"""
RESOLVE_MUTATION = """
mutation($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } }
}
"""


@dataclass(frozen=True)
class HookDelivery:
    id: int
    guid: str
    status_code: int
    delivered_at: int  # unix seconds
    redelivery: bool


def _epoch(value: Any) -> int:
    if isinstance(value, datetime):
        return int(value.replace(tzinfo=value.tzinfo or UTC).timestamp())
    if isinstance(value, str) and value:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    return 0


def _translate(exc: Exception) -> GitHubError:
    if isinstance(exc, GitHubError):
        return exc
    if isinstance(exc, RateLimitExceededException):
        return GitHubError(exc.status, "rate limited", transient=True)
    if isinstance(exc, GithubException):
        message = exc.data.get("message", "") if isinstance(exc.data, dict) else str(exc.data)
        return GitHubError(exc.status, str(message)[:300], transient=exc.status >= 500 or exc.status == 429)
    if isinstance(exc, requests.RequestException):  # unreachable, timed out, or 5xx after retries
        return GitHubError(0, f"code host unavailable: {type(exc).__name__}", transient=True)
    return GitHubError(0, f"{type(exc).__name__}: {exc}"[:300], transient=False)


class GitHubApp:
    def __init__(self, settings: HostAppSettings) -> None:
        self.settings = settings
        self.base_url = settings.github_api_url
        self._lock = threading.Lock()
        self._integration: GithubIntegration | None = None
        self._tokens: dict[int, InstallationToken] = {}
        # One PyGithub client per thread and installation: a client is not safe to share between
        # threads (its connection object holds the request being made, so two threads at once
        # can each read the other's response: a job was told another pull request's head).
        self._local = threading.local()
        self.token_requests = 0  # how many tokens were minted (cache efficiency, tests)

    def _options(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "timeout": self.settings.github_timeout_seconds,
            # Only idempotent methods are retried: a retried POST could create a second check run.
            "retry": Retry(total=2, backoff_factor=0.3, status_forcelist=(502, 503, 504)),
            "seconds_between_requests": None,
            "seconds_between_writes": None,
            "lazy": True,
        }

    def _app(self) -> GithubIntegration:
        if not self.settings.github_configured:
            raise ServiceError(
                "not_configured", "the code-host app is not configured (CR_HOSTAPP_APP_ID, CR_HOSTAPP_PRIVATE_KEY)"
            )
        if self._integration is None:
            try:
                pem = self.settings.private_key_pem()
            except OSError as exc:
                raise ServiceError("not_configured", f"cannot read the app's private key: {exc.strerror}") from None
            auth = Auth.AppAuth(self.settings.app_id, pem)
            self._integration = GithubIntegration(auth=auth, **self._options())
        return self._integration

    # --- installation tokens --------------------------------------------------------------

    def _token(self, installation_id: int) -> InstallationToken:
        with self._lock:
            cached = self._tokens.get(installation_id)
            if cached and cached.expires_at - TOKEN_REFRESH_MARGIN_SECONDS > time.time():
                return cached
            grant = self._app().get_access_token(installation_id)
            self.token_requests += 1
            token = InstallationToken(grant.token, _epoch(grant.expires_at) or int(time.time()) + 3600)
            self._tokens[installation_id] = token
            return token

    def _client(self, installation_id: int) -> Github:
        """This thread's client for the installation, made again when its token changed."""
        token = self._token(installation_id)
        clients: dict[int, tuple[str, Github]] = self._local.__dict__.setdefault("clients", {})
        cached = clients.get(installation_id)
        if cached and cached[0] == token.token:
            return cached[1]
        client = Github(auth=Auth.Token(token.token), **self._options())
        clients[installation_id] = (token.token, client)
        return client

    def forget_installation(self, installation_id: int) -> None:
        """Drop a token the code host refused (the installation was suspended or deleted): the
        next call mints a new one, and each thread's client follows the new token."""
        with self._lock:
            self._tokens.pop(installation_id, None)

    async def _run(self, fn: Callable[[], T]) -> T:
        try:
            return await asyncio.to_thread(fn)
        except ServiceError:
            raise
        except Exception as exc:
            raise _translate(exc) from None

    async def installation_token(self, installation_id: int) -> InstallationToken:
        return await self._run(lambda: self._token(installation_id))

    # --- pull requests, check runs, reviews ------------------------------------------------

    async def get_pull(self, installation_id: int, full_name: str, number: int) -> PullInfo:
        def call() -> PullInfo:
            pr = self._client(installation_id).get_repo(full_name).get_pull(number)
            return PullInfo(number, pr.state, pr.head.sha, pr.base.sha)

        return await self._run(call)

    async def list_files(self, installation_id: int, full_name: str, number: int, limit: int) -> list[ChangedFile]:
        def call() -> list[ChangedFile]:
            pr = self._client(installation_id).get_repo(full_name).get_pull(number)
            files: list[ChangedFile] = []
            for f in pr.get_files():
                files.append(ChangedFile(f.filename, f.status, f.patch or ""))
                if len(files) >= limit:
                    break
            return files

        return await self._run(call)

    async def create_check_run(
        self, installation_id: int, full_name: str, head_sha: str, external_id: str, status: str, output: dict[str, str]
    ) -> int:
        def call() -> int:
            repo = self._client(installation_id).get_repo(full_name)
            run = repo.create_check_run(
                name=self.settings.check_name,
                head_sha=head_sha,
                external_id=external_id,
                status=status,
                output=output,  # type: ignore[arg-type]
            )
            return int(run.id)

        return await self._run(call)

    async def find_check_run(self, installation_id: int, full_name: str, head_sha: str, external_id: str) -> int | None:
        def call() -> int | None:
            commit = self._client(installation_id).get_repo(full_name).get_commit(head_sha)
            for run in commit.get_check_runs(check_name=self.settings.check_name):
                if run.external_id == external_id:
                    return int(run.id)
            return None

        return await self._run(call)

    async def update_check_run(
        self,
        installation_id: int,
        full_name: str,
        check_run_id: int,
        *,
        status: str,
        output: dict[str, Any],
        conclusion: str = "",
    ) -> None:
        """``output.annotations`` (at most 50 a request) are added to those already posted."""

        def call() -> None:
            run = self._client(installation_id).get_repo(full_name).get_check_run(check_run_id)
            extra: dict[str, Any] = {}
            if conclusion:
                extra = {"conclusion": conclusion, "completed_at": datetime.now(UTC)}
            run.edit(status=status, output=output, **extra)  # type: ignore[arg-type]

        await self._run(call)

    async def create_review(
        self,
        installation_id: int,
        full_name: str,
        number: int,
        commit_id: str,
        body: str,
        comments: list[dict[str, Any]],
    ) -> int:
        def call() -> int:
            pr = self._client(installation_id).get_repo(full_name).get_pull(number)
            # The requester directly: PyGithub's create_review wants a completed Commit object
            # for commit_id, which would cost a request; pinning the commit keeps comments on
            # the lines that were analysed even if the branch moved since.
            _, data = pr.requester.requestJsonAndCheck(
                "POST",
                f"{pr.url}/reviews",
                input={"commit_id": commit_id, "body": body, "event": "COMMENT", "comments": comments},
            )
            return int(data["id"])

        return await self._run(call)

    async def find_review(self, installation_id: int, full_name: str, number: int, marker: str) -> int | None:
        """A review we already posted (its body carries ``marker``), for a redelivered job."""

        def call() -> int | None:
            pr = self._client(installation_id).get_repo(full_name).get_pull(number)
            for review in pr.get_reviews():
                if marker in (review.body or ""):
                    return int(review.id)
            return None

        return await self._run(call)

    async def review_comments(
        self, installation_id: int, full_name: str, number: int, review_id: int
    ) -> list[ReviewComment]:
        """The line comments of one review (the create call does not return their ids)."""

        def call() -> list[ReviewComment]:
            requester = self._client(installation_id).requester
            url = f"/repos/{full_name}/pulls/{number}/reviews/{review_id}/comments"
            out: list[ReviewComment] = []
            page = 1
            while True:
                _, data = requester.requestJsonAndCheck("GET", url, parameters={"per_page": 100, "page": page})
                for c in data or []:
                    out.append(
                        ReviewComment(int(c["id"]), c.get("body") or "", c.get("path") or "", c.get("line") or 0)
                    )
                if len(data or []) < 100:
                    return out
                page += 1

        return await self._run(call)

    async def review_threads(self, installation_id: int, full_name: str, number: int) -> list[ReviewThread]:
        """The pull request's review threads (GraphQL only: REST has no threads)."""

        def call() -> list[ReviewThread]:
            requester = self._client(installation_id).requester
            owner, name = full_name.split("/", 1)
            threads: list[ReviewThread] = []
            cursor: str | None = None
            while True:
                variables = {"owner": owner, "name": name, "number": number, "cursor": cursor}
                _, data = requester.graphql_query(THREADS_QUERY, variables)
                pull = ((data.get("data") or {}).get("repository") or {}).get("pullRequest") or {}
                page = pull.get("reviewThreads") or {}
                for node in page.get("nodes") or []:
                    first = ((node.get("comments") or {}).get("nodes") or [{}])[0]
                    threads.append(
                        ReviewThread(node["id"], bool(node.get("isResolved")), int(first.get("databaseId") or 0))
                    )
                info = page.get("pageInfo") or {}
                if not info.get("hasNextPage"):
                    return threads
                cursor = info.get("endCursor")

        return await self._run(call)

    async def resolve_thread(self, installation_id: int, thread_id: str) -> None:
        def call() -> None:
            self._client(installation_id).requester.graphql_query(RESOLVE_MUTATION, {"threadId": thread_id})

        await self._run(call)

    async def reply(self, installation_id: int, full_name: str, number: int, comment_id: int, body: str) -> int:
        """A reply in a review comment's thread."""

        def call() -> int:
            url = f"/repos/{full_name}/pulls/{number}/comments/{comment_id}/replies"
            _, data = self._client(installation_id).requester.requestJsonAndCheck("POST", url, input={"body": body})
            return int(data["id"])

        return await self._run(call)

    async def comment(self, installation_id: int, full_name: str, number: int, body: str) -> int:
        """A comment on the pull request's conversation."""

        def call() -> int:
            url = f"/repos/{full_name}/issues/{number}/comments"
            _, data = self._client(installation_id).requester.requestJsonAndCheck("POST", url, input={"body": body})
            return int(data["id"])

        return await self._run(call)

    async def reactions(self, installation_id: int, full_name: str, comment_id: int) -> list[Reaction]:
        """Reactions on a review comment: the code host sends no webhook for them."""

        def call() -> list[Reaction]:
            url = f"/repos/{full_name}/pulls/comments/{comment_id}/reactions"
            requester = self._client(installation_id).requester
            _, data = requester.requestJsonAndCheck("GET", url, parameters={"per_page": 100})
            return [
                Reaction(
                    str(r.get("content") or ""),
                    str((r.get("user") or {}).get("login") or ""),
                    (r.get("user") or {}).get("type") == "Bot",
                    _epoch(r.get("created_at")),
                )
                for r in data or []
            ]

        return await self._run(call)

    async def file_text(self, installation_id: int, full_name: str, path: str, ref: str) -> str | None:
        """A file's text at a commit, or None when it does not exist there."""

        def call() -> str | None:
            try:
                found = self._client(installation_id).get_repo(full_name).get_contents(path, ref=ref)
            except GithubException as exc:
                if exc.status == 404:
                    return None
                raise
            if isinstance(found, list):
                return None
            return found.decoded_content.decode("utf-8", "replace")

        return await self._run(call)

    # --- app-level: webhook deliveries -----------------------------------------------------

    async def hook_deliveries(self, per_page: int = 100) -> list[HookDelivery]:
        def call() -> list[HookDelivery]:
            _, data = self._app().requester.requestJsonAndCheck(
                "GET", "/app/hook/deliveries", parameters={"per_page": per_page}
            )
            return [
                HookDelivery(
                    int(d["id"]),
                    str(d.get("guid") or ""),
                    int(d.get("status_code") or 0),
                    _epoch(d.get("delivered_at")),
                    bool(d.get("redelivery")),
                )
                for d in data or []
            ]

        return await self._run(call)

    async def redeliver(self, hook_delivery_id: int) -> None:
        def call() -> None:
            self._app().requester.requestJsonAndCheck("POST", f"/app/hook/deliveries/{hook_delivery_id}/attempts")

        await self._run(call)
