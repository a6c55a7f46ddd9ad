"""A small local stand-in for the GitHub REST API endpoints hostapp calls, over loopback.

It serves the recorded fixture bodies (tests/hostapp/fixtures/github/api, copies of GitHub's
own examples) under a GitHub Enterprise style base URL (``http://127.0.0.1:PORT/api/v3``),
checks the app JWT and the installation tokens it issued, and records every request so
tests can assert what was posted. Tests steer it: the pull requests' state and head, the
changed files, failures and stalls (a request that hangs, to kill a worker mid-job).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

FIXTURES = Path(__file__).resolve().parents[1] / "hostapp" / "fixtures" / "github"
PREFIX = "/api/v3"
APP_ID = "424242"


def fixture(name: str) -> Any:
    path = FIXTURES / name if (FIXTURES / name).exists() else FIXTURES / "api" / name
    return json.loads(path.read_text())


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Call:
    method: str
    path: str  # without the /api/v3 prefix
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    at: float = field(default_factory=time.monotonic)  # when it arrived (latency measures)


@dataclass
class _Rule:
    method: str
    pattern: re.Pattern[str]
    times: int
    status: int = 0  # a failure to answer with
    gate: threading.Event | None = None  # a stall: hold the request until set (or timeout)
    entered: threading.Event = field(default_factory=threading.Event)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up (git closing a dumb-HTTP connection, a killed worker) is normal."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class GitHubStandIn:
    def __init__(self) -> None:
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.private_key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        self.public_key = key.public_key()
        self.app_id = APP_ID
        self.lock = threading.Lock()
        self.calls: list[Call] = []
        self.tokens: dict[str, int] = {}  # issued token -> installation id
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.files: dict[tuple[str, int], list[dict[str, Any]]] = {}
        self.check_runs: dict[int, dict[str, Any]] = {}
        self.reviews: dict[int, dict[str, Any]] = {}
        # Review comments (the review's line comments and replies), threads (GraphQL), reactions.
        self.comments: dict[int, dict[str, Any]] = {}
        self.threads: dict[str, dict[str, Any]] = {}  # node id -> {resolved, comments: [ids], pull}
        self.reactions: dict[int, list[dict[str, Any]]] = {}
        self.issue_comments: list[dict[str, Any]] = []
        self.contents: dict[tuple[str, str, str], str] = {}  # (repo, path, ref) -> text
        self.git_dirs: dict[str, Path] = {}  # owner/repo -> a bare repository served over dumb HTTP
        self.hook_deliveries: list[dict[str, Any]] = []
        self.refused_installations: set[int] = set()
        self.rules: list[_Rule] = []
        self._ids = 1000
        self.server = _QuietServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="github-standin", daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{PREFIX}"

    def env(self) -> dict[str, str]:
        """Settings that point a hostapp process at this stand-in, and let the indexer clone
        the repositories it serves (http on loopback, this origin only)."""
        return {
            "CR_HOSTAPP_GITHUB_API_URL": self.url,
            "CR_HOSTAPP_APP_ID": self.app_id,
            "CR_HOSTAPP_PRIVATE_KEY": self.private_key_pem,
            "CR_INDEXER_ALLOWED_URL_SCHEMES": "https,http",
            "CR_INDEXER_ALLOWED_CLONE_ORIGINS": f"127.0.0.1:{self.port}",
        }

    def serve_git(self, full_name: str, bare: Path) -> None:
        """Serve a bare repository at ``/<owner>/<repo>.git`` (git's dumb HTTP protocol: static
        files; ``git update-server-info`` is run here and must be again after each push)."""
        subprocess.run(["git", "update-server-info"], cwd=bare, check=True)
        with self.lock:
            self.git_dirs[full_name.lower()] = bare

    def close(self) -> None:
        for rule in self.rules:
            if rule.gate is not None:
                rule.gate.set()
        self.server.shutdown()
        self.server.server_close()

    # --- steering -------------------------------------------------------------------------

    def next_id(self) -> int:
        with self.lock:
            self._ids += 1
            return self._ids

    def set_pull(self, full_name: str, number: int, *, head_sha: str, state: str = "open", base_sha: str = "") -> None:
        with self.lock:
            self.pulls[(full_name.lower(), number)] = {"head_sha": head_sha, "state": state, "base_sha": base_sha}

    def set_files(self, full_name: str, number: int, files: list[dict[str, Any]]) -> None:
        with self.lock:
            self.files[(full_name.lower(), number)] = files

    def set_content(self, full_name: str, path: str, ref: str, text: str) -> None:
        with self.lock:
            self.contents[(full_name.lower(), path, ref)] = text

    def react(self, comment_id: int, content: str, login: str = "octocat", bot: bool = False) -> None:
        """A person (or a bot) reacts to a review comment; no webhook, as on the code host."""
        reaction = fixture("reactions.list-for-pull-request-review-comment.reaction-items.json")[0]
        reaction.update(id=self.next_id(), content=content, created_at=_iso(time.time()))
        reaction["user"] = {**reaction["user"], "login": login, "type": "Bot" if bot else "User"}
        with self.lock:
            self.reactions.setdefault(comment_id, []).append(reaction)

    def thread_of(self, comment_id: int) -> dict[str, Any]:
        with self.lock:
            for node_id, thread in self.threads.items():
                if thread["comments"][0] == comment_id:
                    return {"id": node_id, **thread}
        raise LookupError(f"no thread for comment {comment_id}")

    def review_comments(self, full_name: str, number: int) -> list[dict[str, Any]]:
        """The line comments of every review on a pull request (replies not included)."""
        with self.lock:
            return [
                copy.deepcopy(c)
                for c in self.comments.values()
                if c["_pull"] == (full_name.lower(), number) and "in_reply_to_id" not in c
            ]

    def fail(self, method: str, path_regex: str, status: int, times: int = 1) -> None:
        with self.lock:
            self.rules.append(_Rule(method, re.compile(path_regex), times, status=status))

    def stall(self, method: str, path_regex: str, times: int = 1) -> _Rule:
        """Hold the next matching request(s) until ``release()`` (or 120 s)."""
        rule = _Rule(method, re.compile(path_regex), times, gate=threading.Event())
        with self.lock:
            self.rules.append(rule)
        return rule

    def calls_to(self, method: str, path_regex: str) -> list[Call]:
        pattern = re.compile(path_regex)
        with self.lock:
            return [c for c in self.calls if c.method == method and pattern.fullmatch(c.path)]

    def reset(self) -> None:
        with self.lock:
            for rule in self.rules:
                if rule.gate is not None:
                    rule.gate.set()
            self.calls.clear()
            self.pulls.clear()
            self.files.clear()
            self.check_runs.clear()
            self.reviews.clear()
            self.comments.clear()
            self.threads.clear()
            self.reactions.clear()
            self.issue_comments.clear()
            self.contents.clear()
            self.hook_deliveries.clear()
            self.refused_installations.clear()
            self.rules.clear()

    # --- responses ------------------------------------------------------------------------

    def rewrite(self, body: Any) -> Any:
        """Fixture URLs point at api.github.com; PyGithub only follows URLs on its base URL."""
        return json.loads(json.dumps(body).replace("https://api.github.com", self.url))

    def match_rule(self, method: str, path: str) -> _Rule | None:
        with self.lock:
            for rule in self.rules:
                if rule.times > 0 and rule.method == method and rule.pattern.fullmatch(path):
                    rule.times -= 1
                    return rule
        return None


def _handler(standin: GitHubStandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            return

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def do_PATCH(self) -> None:
            self._serve("PATCH")

        def _serve(self, method: str) -> None:
            parts = urlsplit(self.path)
            if method == "GET" and (m := re.fullmatch(r"/([^/]+/[^/]+)\.git/(.+)", parts.path)):
                return self._serve_git(m.group(1), m.group(2))
            path = parts.path.removeprefix(PREFIX)
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            call = Call(method, path, parse_qs(parts.query), {k.lower(): v for k, v in self.headers.items()}, body)
            with standin.lock:
                standin.calls.append(call)
            rule = standin.match_rule(method, path)
            if rule is not None and rule.gate is not None:
                rule.entered.set()
                rule.gate.wait(120)
            if rule is not None and rule.status:
                return self._send(rule.status, {"message": "stand-in failure"})
            try:
                status, payload = route(standin, call)
            except PermissionError as exc:
                status, payload = 401, {"message": str(exc)}
            except LookupError as exc:
                status, payload = 404, {"message": f"Not Found: {exc}"}
            self._send(status, payload)

        def _serve_git(self, full_name: str, rest: str) -> None:
            with standin.lock:
                bare = standin.git_dirs.get(full_name.lower())
            target = (bare / rest).resolve() if bare else None
            if bare is None or target is None or not target.is_relative_to(bare.resolve()) or not target.is_file():
                return self._send(404, {"message": "Not Found"})
            data = target.read_bytes()
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client went away (a killed worker)
                pass

    return Handler


def _require_app_jwt(standin: GitHubStandIn, call: Call) -> None:
    auth = call.headers.get("authorization", "")
    if not auth.startswith("Bearer "):
        raise PermissionError("app JWT required")
    try:
        claims = jwt.decode(auth[7:], standin.public_key, algorithms=["RS256"])  # type: ignore[arg-type]
    except jwt.PyJWTError as exc:
        raise PermissionError(f"bad app JWT: {exc}") from None
    if str(claims.get("iss")) != standin.app_id:
        raise PermissionError("JWT issuer is not the app")


def _require_token(standin: GitHubStandIn, call: Call) -> int:
    auth = call.headers.get("authorization", "")
    token = auth.split(" ", 1)[1] if " " in auth else ""
    with standin.lock:
        installation = standin.tokens.get(token)
    if installation is None:
        raise PermissionError("Bad credentials")
    return installation


def route(standin: GitHubStandIn, call: Call) -> tuple[int, Any]:
    path, method = call.path, call.method
    if path == "/api/graphql" and method == "POST":
        _require_token(standin, call)
        return 200, _graphql(standin, call.body or {})
    if m := re.fullmatch(r"/app/installations/(\d+)/access_tokens", path):
        _require_app_jwt(standin, call)
        installation = int(m.group(1))
        if installation in standin.refused_installations:
            raise LookupError("installation")
        body = fixture("apps.create-installation-access-token.installation-token.json")
        body["token"] = f"ghs_standin{installation}x{standin.next_id()}"
        body["expires_at"] = _iso(time.time() + 3600)
        with standin.lock:
            standin.tokens[body["token"]] = installation
        return 201, standin.rewrite(body)
    if path == "/app/hook/deliveries" and method == "GET":
        _require_app_jwt(standin, call)
        with standin.lock:
            return 200, copy.deepcopy(standin.hook_deliveries)
    if (m := re.fullmatch(r"/app/hook/deliveries/(\d+)/attempts", path)) and method == "POST":
        _require_app_jwt(standin, call)
        return 202, {}
    if not (m := re.fullmatch(r"/repos/([^/]+/[^/]+)(/.*)", path)):
        raise LookupError(path)
    _require_token(standin, call)
    full_name, rest = m.group(1), m.group(2)
    repo_url = f"{standin.url}/repos/{full_name}"
    if (m := re.fullmatch(r"/pulls/(\d+)", rest)) and method == "GET":
        return 200, _pull(standin, full_name, int(m.group(1)))
    if (m := re.fullmatch(r"/pulls/(\d+)/files", rest)) and method == "GET":
        _pull(standin, full_name, int(m.group(1)))
        with standin.lock:
            files = standin.files.get((full_name.lower(), int(m.group(1))))
        return 200, standin.rewrite(files if files is not None else fixture("pulls.list-files.diff-entry-items.json"))
    if m := re.fullmatch(r"/pulls/(\d+)/reviews", rest):
        number = int(m.group(1))
        if method == "GET":
            with standin.lock:
                found = [r for r in standin.reviews.values() if r["_pull"] == (full_name.lower(), number)]
            return 200, [{k: v for k, v in r.items() if k != "_pull"} for r in found]
        review = standin.rewrite(fixture("pulls.create-review.pull-request-review.json"))
        review.update(id=standin.next_id(), body=call.body.get("body", ""), commit_id=call.body.get("commit_id"))
        review["state"] = "COMMENTED"
        with standin.lock:
            standin.reviews[review["id"]] = {**review, "_pull": (full_name.lower(), number), "request": call.body}
        for item in call.body.get("comments") or []:
            _add_comment(standin, full_name, number, item, review["id"], call.body.get("commit_id") or "")
        return 200, review
    if (m := re.fullmatch(r"/pulls/(\d+)/reviews/(\d+)/comments", rest)) and method == "GET":
        with standin.lock:
            found = [c for c in standin.comments.values() if c["pull_request_review_id"] == int(m.group(2))]
        return 200, _page([_public(c) for c in found], call)
    if (m := re.fullmatch(r"/pulls/(\d+)/comments/(\d+)/replies", rest)) and method == "POST":
        with standin.lock:
            parent = standin.comments.get(int(m.group(2)))
        if parent is None:
            raise LookupError("comment")
        item = {"path": parent["path"], "line": parent["line"], "body": call.body.get("body", "")}
        reply = _add_comment(standin, full_name, int(m.group(1)), item, 0, parent["commit_id"], reply_to=parent["id"])
        return 201, _public(reply)
    if (m := re.fullmatch(r"/pulls/comments/(\d+)/reactions", rest)) and method == "GET":
        with standin.lock:
            return 200, copy.deepcopy(standin.reactions.get(int(m.group(1)), []))
    if (m := re.fullmatch(r"/issues/(\d+)/comments", rest)) and method == "POST":
        comment = standin.rewrite(fixture("issue_comment.created.with-installation.json")["comment"])
        comment.update(id=standin.next_id(), body=call.body.get("body", ""))
        with standin.lock:
            standin.issue_comments.append({**comment, "_pull": (full_name.lower(), int(m.group(1)))})
        return 201, comment
    if (m := re.fullmatch(r"/contents/(.+)", rest)) and method == "GET":
        ref = call.query.get("ref", [""])[0]
        with standin.lock:
            text = standin.contents.get((full_name.lower(), m.group(1), ref))
        if text is None:
            raise LookupError("content")
        data = text.encode()
        return 200, {
            "type": "file",
            "encoding": "base64",
            "content": base64.b64encode(data).decode(),
            "path": m.group(1),
            "name": m.group(1).rsplit("/", 1)[-1],
            "sha": hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest(),
            "size": len(data),
        }
    if rest == "/check-runs" and method == "POST":
        run = standin.rewrite(fixture("checks.create.check-run-example-of-completed-conclusion.json"))
        run_id = standin.next_id()
        run.update(id=run_id, url=f"{repo_url}/check-runs/{run_id}", conclusion=None, completed_at=None)
        run.update({k: v for k, v in call.body.items() if k in ("name", "head_sha", "status", "external_id", "output")})
        with standin.lock:
            standin.check_runs[run_id] = run
        return 201, run
    if (m := re.fullmatch(r"/check-runs/(\d+)", rest)) and method == "PATCH":
        with standin.lock:
            run = standin.check_runs.get(int(m.group(1)))
            if run is None:
                raise LookupError("check run")
            run.update(call.body)
            return 200, copy.deepcopy(run)
    if (m := re.fullmatch(r"/commits/([0-9a-f]+)/check-runs", rest)) and method == "GET":
        name = call.query.get("check_name", [""])[0]
        with standin.lock:
            runs = [
                copy.deepcopy(r)
                for r in standin.check_runs.values()
                if r["head_sha"] == m.group(1) and (not name or r["name"] == name)
            ]
        return 200, {"total_count": len(runs), "check_runs": runs}
    raise LookupError(path)


def _page(items: list[Any], call: Call) -> list[Any]:
    per_page = int(call.query.get("per_page", ["30"])[0])
    page = int(call.query.get("page", ["1"])[0])
    return items[(page - 1) * per_page : page * per_page]


def _public(comment: dict[str, Any]) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in comment.items() if not k.startswith("_")}


def _add_comment(
    standin: GitHubStandIn,
    full_name: str,
    number: int,
    item: dict[str, Any],
    review_id: int,
    commit_id: str,
    reply_to: int = 0,
) -> dict[str, Any]:
    """A review comment shaped like the code host's (from a webhook fixture's comment); a
    line comment opens a thread, a reply joins its parent's."""
    comment = standin.rewrite(fixture("pull_request_review_comment.created.json")["comment"])
    comment_id = standin.next_id()
    comment.update(
        id=comment_id,
        node_id=f"PRRC_standin{comment_id}",
        pull_request_review_id=review_id or comment_id,
        path=item.get("path", ""),
        line=item.get("line"),
        original_line=item.get("line"),
        start_line=item.get("start_line"),
        side=item.get("side", "RIGHT"),
        body=item.get("body", ""),
        commit_id=commit_id,
        original_commit_id=commit_id,
        user={**comment["user"], "login": "code-review[bot]", "type": "Bot"},
    )
    if reply_to:
        comment["in_reply_to_id"] = reply_to
    with standin.lock:
        standin.comments[comment_id] = {**comment, "_pull": (full_name.lower(), number), "_request": item}
        if reply_to:
            for thread in standin.threads.values():
                if reply_to in thread["comments"]:
                    thread["comments"].append(comment_id)
        else:
            standin.threads[f"PRRT_standin{comment_id}"] = {
                "resolved": False,
                "comments": [comment_id],
                "pull": (full_name.lower(), number),
            }
    return comment


def _graphql(standin: GitHubStandIn, body: dict[str, Any]) -> dict[str, Any]:
    """The two GraphQL operations the app sends, answered in the schema's shape: a pull
    request's ``reviewThreads`` and the ``resolveReviewThread`` mutation."""
    query, variables = str(body.get("query") or ""), body.get("variables") or {}
    if "resolveReviewThread" in query:
        thread_id = variables.get("threadId")
        with standin.lock:
            thread = standin.threads.get(thread_id)
            if thread is None:
                return {"data": None, "errors": [{"type": "NOT_FOUND", "message": f"no thread {thread_id}"}]}
            thread["resolved"] = True
        return {"data": {"resolveReviewThread": {"thread": {"id": thread_id, "isResolved": True}}}}
    if "reviewThreads" in query:
        pull = (f"{variables.get('owner')}/{variables.get('name')}".lower(), int(variables.get("number") or 0))
        with standin.lock:
            nodes = [
                {"id": node_id, "isResolved": t["resolved"], "comments": {"nodes": [{"databaseId": t["comments"][0]}]}}
                for node_id, t in standin.threads.items()
                if t["pull"] == pull
            ]
        threads = {"pageInfo": {"hasNextPage": False, "endCursor": None}, "nodes": nodes}
        return {"data": {"repository": {"pullRequest": {"reviewThreads": threads}}}}
    return {"data": None, "errors": [{"message": "the stand-in answers reviewThreads and resolveReviewThread only"}]}


def _pull(standin: GitHubStandIn, full_name: str, number: int) -> dict[str, Any]:
    with standin.lock:
        state = standin.pulls.get((full_name.lower(), number))
    if state is None:
        raise LookupError("pull request")
    pr = standin.rewrite(fixture("pull_request.opened.json")["pull_request"])
    pr["number"] = number
    pr["url"] = f"{standin.url}/repos/{full_name}/pulls/{number}"
    pr["state"] = state["state"]
    pr["head"]["sha"] = state["head_sha"]
    if state["base_sha"]:
        pr["base"]["sha"] = state["base_sha"]
    return pr


_E2E: GitHubStandIn | None = None


def e2e_standin() -> GitHubStandIn:
    """One stand-in for the e2e system (its hostapp process is pointed at it at start)."""
    global _E2E
    if _E2E is None:
        _E2E = GitHubStandIn()
    return _E2E


def pull_files(git_dir: Path, base: str, head: str) -> list[dict[str, Any]]:
    """The code host's ``GET /pulls/{n}/files`` entries of a real change: each file's status and
    its patch (the hunks of ``git diff base...head``, without the file headers), as GitHub lists them."""
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir), "diff", "--no-color", "--no-ext-diff", "-M", f"{base}...{head}"],
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "replace")
    files: list[dict[str, Any]] = []
    for block in re.split(r"^diff --git ", out, flags=re.MULTILINE)[1:]:
        lines = block.split("\n")
        status, name = "modified", ""
        for line in lines[1:]:
            if line.startswith("@@"):
                break
            if line.startswith("new file mode"):
                status = "added"
            elif line.startswith("deleted file mode"):
                status = "removed"
            elif line.startswith("rename to "):
                status, name = "renamed", line[len("rename to ") :]
            elif line.startswith("+++ ") and line != "+++ /dev/null":
                name = line[len("+++ b/") :]
            elif line.startswith("--- ") and not name and line != "--- /dev/null":
                name = line[len("--- a/") :]
        first = next((i for i, line in enumerate(lines) if line.startswith("@@")), None)
        patch = "\n".join(lines[first:]).rstrip("\n") if first is not None else ""
        if not name:  # a binary or mode-only change: the name is in the "diff --git a/x b/x" line
            name = lines[0].rsplit(" b/", 1)[-1]
        files.append({"filename": name, "status": status, "patch": patch})
    return files
