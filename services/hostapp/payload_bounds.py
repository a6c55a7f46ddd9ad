"""What a signed code-host delivery may carry before anything is stored from it.

A valid signature proves who sent a body, not that its values fit: a 5,000-character head sha,
a pull-request number of 2^40 or ``pull_request`` as a string are impossible from GitHub, and
used to reach the database (a 503 "database unavailable") or the handler (a 500). Each is
named here and refused with 400 ``bad_request``; the delivery is still recorded (under its id,
with the refusal as its outcome), so a redelivery is a no-op and the reconciler does not ask
for it again. A value that is merely absent keeps its old meaning: the delivery is ignored.
"""

from __future__ import annotations

import re
from typing import Any

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
MAX_ID_CHARS = 100  # X-GitHub-Delivery and X-GitHub-Event (GitHub's are a UUID and a short name)
MAX_ACTION_CHARS = 100
MAX_FULL_NAME_CHARS = 300
MAX_LOGIN_CHARS = 200
MAX_ACCOUNT_TYPE_CHARS = 30
_SHA = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_TOKEN = re.compile(r"^[A-Za-z0-9_.:-]+$")


def header_problem(delivery_id: str, event: str) -> str | None:
    """Headers the delivery is recorded under: without a fitting id it cannot be recorded at all."""
    for name, value in (("X-GitHub-Delivery", delivery_id), ("X-GitHub-Event", event)):
        if not value:
            return f"{name} is required"
        if len(value) > MAX_ID_CHARS or not _TOKEN.match(value):
            return f"{name} is not an id (at most {MAX_ID_CHARS} letters, digits and _.:-)"
    return None


def payload_problem(event: str, payload: dict[str, Any]) -> str | None:
    """The first impossible value of a delivery we handle, or None."""
    problem = _common(payload)
    if problem is None and event == "pull_request":
        problem = _pull_request(payload)
    if problem is None and event in ("installation", "installation_repositories"):
        problem = _installation(payload)
    return problem


def _is_int(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _text(value: object, limit: int) -> bool:
    return isinstance(value, str) and len(value) <= limit and "\x00" not in value


def _common(payload: dict[str, Any]) -> str | None:
    action = payload.get("action")
    if action is not None and not _text(action, MAX_ACTION_CHARS):
        return f"action must be a string of at most {MAX_ACTION_CHARS} characters"
    installation = payload.get("installation")
    if installation is not None:
        if not isinstance(installation, dict):
            return "installation must be an object"
        if installation.get("id") is not None and not _is_int(installation["id"], 1, INT64_MAX):
            return "installation.id must be a positive 64-bit integer"
        account = installation.get("account")
        if account is not None:
            if not isinstance(account, dict):
                return "installation.account must be an object"
            if account.get("login") is not None and not _text(account["login"], MAX_LOGIN_CHARS):
                return f"installation.account.login must be a string of at most {MAX_LOGIN_CHARS} characters"
            if account.get("type") is not None and not _text(account["type"], MAX_ACCOUNT_TYPE_CHARS):
                return f"installation.account.type must be a string of at most {MAX_ACCOUNT_TYPE_CHARS} characters"
    repository = payload.get("repository")
    if repository is not None:
        if not isinstance(repository, dict):
            return "repository must be an object"
        problem = _repo(repository, "repository")
        if problem:
            return problem
    return None


def _repo(repo: dict[str, Any], where: str) -> str | None:
    name = repo.get("full_name")
    if name is not None and not (_text(name, MAX_FULL_NAME_CHARS) and name.count("/") == 1):
        return f"{where}.full_name must be owner/name in at most {MAX_FULL_NAME_CHARS} characters"
    if repo.get("id") is not None and not _is_int(repo["id"], 1, INT64_MAX):
        return f"{where}.id must be a positive 64-bit integer"
    return None


def _pull_request(payload: dict[str, Any]) -> str | None:
    pr = payload.get("pull_request")
    if pr is None:
        return None
    if not isinstance(pr, dict):
        return "pull_request must be an object"
    if pr.get("number") is not None and not _is_int(pr["number"], 1, INT32_MAX):
        return "pull_request.number must be an integer from 1 to 2^31-1"
    head = pr.get("head")
    if head is None:
        return None
    if not isinstance(head, dict):
        return "pull_request.head must be an object"
    sha = head.get("sha")
    if sha is not None and not (isinstance(sha, str) and _SHA.match(sha)):
        return "pull_request.head.sha must be a commit id (40 or 64 lowercase hex digits)"
    return None


def _installation(payload: dict[str, Any]) -> str | None:
    for key in ("repositories", "repositories_added", "repositories_removed"):
        repos = payload.get(key)
        if repos is None:
            continue
        if not isinstance(repos, list):
            return f"{key} must be a list"
        for i, repo in enumerate(repos):
            if not isinstance(repo, dict):
                return f"{key}[{i}] must be an object"
            problem = _repo(repo, f"{key}[{i}]")
            if problem:
                return problem
    return None
