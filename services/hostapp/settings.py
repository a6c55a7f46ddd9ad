from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from pydantic import Field, field_validator

from services.kit.settings import ServiceSettings


class HostAppSettings(ServiceSettings):
    service_name: ClassVar[str] = "hostapp"

    # The code host's REST API. GitHub Enterprise Server: https://HOST/api/v3.
    github_api_url: str = "https://api.github.com"
    # Where repositories are cloned from; empty: derived from the API URL.
    github_web_url: str = ""
    app_id: str = ""
    # The app's private key: PEM text, or a path to a PEM file.
    private_key: str = ""
    github_timeout_seconds: int = 15
    check_name: str = "code-review"
    # The app's slug: people write "@<slug> ignore <rule>" to turn a rule off.
    app_slug: str = "code-review"
    # What fails the check run: "strict" (any new strict finding), "error" (a new strict
    # finding of severity error), or "never" (neutral at worst).
    fail_on: str = "strict"
    max_review_comments: int = 50
    # Strict findings below this severity ("info": a quote style) are annotations only: no
    # comment, no failure. "info" comments every strict finding.
    comment_min_severity: str = "warning"
    # Verdicts and replies not delivered at once are retried this often.
    feedback_poll_seconds: float = 10.0
    # The reconciler reads reactions on open threads active within this window.
    reactions_lookback_seconds: float = 14 * 24 * 3600.0

    # The PR job worker (durable pull consumer on the PR_JOBS work queue). Jobs heartbeat while
    # they run, so this bounds how soon a crashed worker's job goes to another, not a job's length.
    job_ack_wait_seconds: float = 30.0
    job_max_deliver: int = 10
    job_retry_delay_seconds: float = 5.0
    # Jobs one worker runs at once. A job mostly waits (the code host, the analyzer, the
    # database), so one at a time left the process idle: see docs/hostapp.md, "Throughput".
    job_concurrency: int = Field(default=8, ge=1, le=64)
    # A job waiting for its repository's first index gives up after this long.
    index_wait_seconds: float = 6 * 3600.0

    # The reconciler (requeue lost or abandoned jobs; ask the code host to redeliver failures).
    reconcile_interval_seconds: float = 60.0
    requeue_after_seconds: float = 600.0
    redeliver_lookback_seconds: float = 6 * 3600.0

    @field_validator("github_api_url", "github_web_url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @property
    def github_configured(self) -> bool:
        return bool(self.app_id and self.private_key)

    def private_key_pem(self) -> str:
        """The PEM text, whether the setting holds it or names a file holding it."""
        key = self.private_key.strip()
        if key.startswith("-----BEGIN"):
            return key.replace("\\n", "\n") + "\n"
        return Path(key).expanduser().read_text()

    def web_url(self) -> str:
        if self.github_web_url:
            return self.github_web_url
        api = self.github_api_url
        if api == "https://api.github.com":
            return "https://github.com"
        return api.removesuffix("/api/v3")


def load() -> HostAppSettings:
    return HostAppSettings()
