"""Sync and async clients for ``/v1``: one ``send`` each, the spec's retries, one error type.

    from services.client import Client, api

    with Client() as client:                       # url and token from env or config file
        repo = client.send(api.create_repository(path="/src/shop"))
        client.wait_for_index(repo.id, trigger=True)
        result = client.send(api.analyze(repo.id, "app/x.py", content=open("app/x.py").read()))

``sleep`` and ``clock`` are parameters so tests can run the retry and polling rules without waiting.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import httpx

from services.api.repositories import IndexStatus
from services.client import config as cfg
from services.client.api import Call
from services.client.errors import ApiError
from services.client.indexing import Pause, Progress, Steps, index_and_wait
from services.client.retry import Attempts, RetryPolicy, Wait

T = TypeVar("T")
USER_AGENT = "codereview-client/0.1"
log = logging.getLogger("services.client")


def announce(wait: Wait) -> None:
    """The default ``on_wait``: a caller that waits says so (stderr when logging is unconfigured)."""
    log.warning("waiting %gs: %s", wait.seconds, wait.reason)


class _Base:
    def __init__(
        self,
        url: str | None,
        token: str | None,
        profile: str | None,
        retry: RetryPolicy | None,
        on_wait: Callable[[Wait], None] | None,
    ) -> None:
        self.config = cfg.load(url=url, token=token, profile=profile)
        self.retry = retry or RetryPolicy()
        self.on_wait = on_wait or announce

    def _headers(self) -> dict[str, str]:
        headers = {"User-Agent": USER_AGENT, "Accept": "application/json"}
        if self.config.token:
            headers["Authorization"] = f"Bearer {self.config.token}"
        return headers

    def _request(self, call: Call[Any]) -> dict[str, Any]:
        args: dict[str, Any] = {"method": call.method, "url": self.config.url + call.path}
        if call.params:
            args["params"] = call.params
        if call.body is not None:
            args["json"] = call.body
        return args

    @staticmethod
    def _status(answer: httpx.Response | httpx.TransportError) -> tuple[int, Mapping[str, str], str]:
        """Status, headers and the error body's code: a 429's code says whether waiting helps."""
        if isinstance(answer, httpx.TransportError):
            return 0, {}, ""
        code = ""
        if not answer.is_success and answer.content:
            try:
                body = answer.json()
            except ValueError:
                body = None
            if isinstance(body, dict) and isinstance(body.get("code"), str):
                code = body["code"]
        return answer.status_code, answer.headers, code

    def _read(self, call: Call[T], answer: httpx.Response | httpx.TransportError) -> T:
        if isinstance(answer, httpx.TransportError):
            raise ApiError(
                0, "service_unavailable", f"cannot reach {self.config.url}: {answer or type(answer).__name__}"
            )
        body: Any = None
        if answer.content:
            try:
                body = answer.json()
            except ValueError:
                body = answer.text
        if answer.is_success:
            return call.parse(body)
        raise ApiError.from_response(answer.status_code, body, answer.reason_phrase)


class Client(_Base):
    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        profile: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.BaseTransport | None = None,
        on_wait: Callable[[Wait], None] | None = None,
    ) -> None:
        super().__init__(url, token, profile, retry, on_wait)
        self.sleep, self.clock = sleep, clock
        self.http = httpx.Client(headers=self._headers(), timeout=timeout, transport=transport)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def send(self, call: Call[T]) -> T:
        attempts = Attempts(self.retry)
        while True:
            try:
                answer: httpx.Response | httpx.TransportError = self.http.request(**self._request(call))
            except httpx.TransportError as exc:
                answer = exc
            wait = attempts.after(*self._status(answer))
            if wait is None:
                return self._read(call, answer)
            self.on_wait(wait)
            self.sleep(wait.seconds)

    def drive(self, steps: Steps, on_progress: Callable[[IndexStatus], None] | None = None) -> IndexStatus:
        answer: Any = None
        error: ApiError | None = None
        while True:
            try:
                step = steps.throw(error) if error else steps.send(answer)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            answer, error = None, None
            if isinstance(step, Pause):
                self.sleep(step.seconds)
            elif isinstance(step, Progress):
                if on_progress:
                    on_progress(step.status)
            else:
                try:
                    answer = self.send(step)
                except ApiError as exc:
                    error = exc

    def wait_for_index(
        self,
        repo: str,
        *,
        trigger: bool = False,
        incremental: bool = False,
        poll_interval: float = 1.0,
        timeout: float | None = None,
        on_progress: Callable[[IndexStatus], None] | None = None,
    ) -> IndexStatus:
        """Poll the index status until the run is ready or failed; ``trigger=True`` starts a run first.

        By default nothing new is started: waiting follows the run in progress, or answers the
        current status at once when there is none.
        """
        steps = index_and_wait(repo, self.clock, trigger, incremental, poll_interval, timeout)
        return self.drive(steps, on_progress)


class AsyncClient(_Base):
    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        profile: str | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 120.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
        transport: httpx.AsyncBaseTransport | None = None,
        on_wait: Callable[[Wait], None] | None = None,
    ) -> None:
        super().__init__(url, token, profile, retry, on_wait)
        self.sleep, self.clock = sleep, clock
        self.http = httpx.AsyncClient(headers=self._headers(), timeout=timeout, transport=transport)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self.http.aclose()

    async def send(self, call: Call[T]) -> T:
        attempts = Attempts(self.retry)
        while True:
            try:
                answer: httpx.Response | httpx.TransportError = await self.http.request(**self._request(call))
            except httpx.TransportError as exc:
                answer = exc
            wait = attempts.after(*self._status(answer))
            if wait is None:
                return self._read(call, answer)
            self.on_wait(wait)
            await self.sleep(wait.seconds)

    async def drive(
        self, steps: Steps, on_progress: Callable[[IndexStatus], Awaitable[None]] | None = None
    ) -> IndexStatus:
        answer: Any = None
        error: ApiError | None = None
        while True:
            try:
                step = steps.throw(error) if error else steps.send(answer)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            answer, error = None, None
            if isinstance(step, Pause):
                await self.sleep(step.seconds)
            elif isinstance(step, Progress):
                if on_progress:
                    await on_progress(step.status)
            else:
                try:
                    answer = await self.send(step)
                except ApiError as exc:
                    error = exc

    async def wait_for_index(
        self,
        repo: str,
        *,
        trigger: bool = False,
        incremental: bool = False,
        poll_interval: float = 1.0,
        timeout: float | None = None,
        on_progress: Callable[[IndexStatus], Awaitable[None]] | None = None,
    ) -> IndexStatus:
        """Poll the index status until the run is ready or failed; ``trigger=True`` starts a run first.

        By default nothing new is started: waiting follows the run in progress, or answers the
        current status at once when there is none.
        """
        steps = index_and_wait(repo, self.clock, trigger, incremental, poll_interval, timeout)
        return await self.drive(steps, on_progress)
