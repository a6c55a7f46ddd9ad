"""``python -m bench.pr_review``: real merged pull requests replayed through the real services.

The five services start as processes (fresh databases, their own NATS streams) with the GitHub
stand-in of tests/standins as the code host. Each corpus repository is served by the stand-in
over git's HTTP protocol at its pinned commit, installed (a signed ``installation`` webhook),
indexed and learned as a hosted repository. Then, per repository, its most recent merged pull
requests with several commits (merge commits of the first-parent chain; the branch's commits in
order are the pushes) are fed as signed ``opened`` / ``synchronize`` deliveries through the
gateway; each push waits for its check run to complete. What the code host received is counted
from the stand-in's own records, not from hostapp's tables:

- comments per pull request, and repeated comments (the same text, suggestion included, posted
  again on the same file of the same pull request);
- the share of commented findings whose thread a later push resolved;
- the share of pull requests with no comment;
- delivery-to-completed-check latency, p50 and p95 (the index is warm: built before the replay).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.pr_review.history import PullRequest, merged_pull_requests
from bench.repos import Corpus, corpora
from bench.stack import Stack, delete_streams, nats, postgres, service_databases
from services.devrun.system import ROOT
from tests.e2e.harness import RunningSystem, build_system
from tests.standins.github_api import GitHubStandIn, e2e_standin, pull_files
from tests.standins.github_api import fixture as github_fixture

WORK = ROOT / "bench" / ".work" / "pr_review"
SECRET = "e2e-code-host-secret"  # what tests.e2e.harness gives the gateway
INSTALLATION = 8001
REPOSITORIES = (
    "aio-libs/yarl",
    "arrow-py/arrow",
    "hynek/structlog",
    "jd/tenacity",
    "marshmallow-code/marshmallow",
    "pypa/packaging",
    "pytest-dev/pluggy",
    "python-attrs/attrs",
    "python-jsonschema/jsonschema",
    "python-poetry/tomlkit",
)
TARGET_REPEATS = 0
TARGET_COMMENTS_PER_PR = 0.3
TARGET_P50_S = 5.0
TARGET_P95_S = 15.0
HEADER = (
    "| repository | PRs | pushes | comments | comments/PR | repeated | resolved by a later push "
    "| PRs without a comment | p50 s | p95 s | not completed |"
)
FINAL = ("completed", "skipped", "dropped", "superseded", "failed")


@dataclass
class Tally:
    prs: int = 0
    pushes: int = 0
    comments: int = 0
    repeats: int = 0
    resolved: int = 0
    silent_prs: int = 0
    states: dict[str, int] = field(default_factory=dict)
    conclusions: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("prs", "pushes", "comments", "repeats", "resolved", "silent_prs"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for mine, theirs in ((self.states, other.states), (self.conclusions, other.conclusions)):
            for key, n in theirs.items():
                mine[key] = mine.get(key, 0) + n
        self.latencies += other.latencies


def sign(body: bytes) -> str:
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


def deliver(http: httpx.Client, event: str, payload: dict[str, Any]) -> str:
    """Send a signed delivery; its id (hostapp answers once it is recorded, and applies it after)."""
    raw = json.dumps(payload).encode()
    delivery = str(uuid.uuid4())
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": sign(raw),
        "Content-Type": "application/json",
    }
    reply = http.post("/webhooks/code_host", content=raw, headers=headers)
    if reply.status_code != 200:
        raise RuntimeError(f"webhook {event} -> {reply.status_code}: {reply.text[:300]}")
    return delivery


def pull_request_event(full_name: str, number: int, head: str, action: str) -> dict[str, Any]:
    body = github_fixture("pull_request.opened.json")
    body.update(action=action, number=number)
    body["installation"]["id"] = INSTALLATION
    body["repository"]["full_name"] = full_name
    body["pull_request"]["number"] = number
    body["pull_request"]["head"]["sha"] = head
    return body


class Bench:
    def __init__(self, system: RunningSystem, github: GitHubStandIn, token: str) -> None:
        self.system = system
        self.github = github
        self.http = httpx.Client(base_url=system.url, timeout=60)
        self.auth = {"Authorization": f"Bearer {token}"}
        url = system.layout.database_urls["hostapp"].replace("postgresql+psycopg://", "postgresql://")
        self.hostapp_db = psycopg.connect(url, autocommit=True)

    def applied(self, delivery: str, timeout: float = 60) -> str:
        """The job id hostapp's delivery processor gave a delivery ('' for none)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            row = self.hostapp_db.execute(
                "select coalesce(job_id, '') from webhook_deliveries where delivery_id = %s"
                " and processed_at is not null",
                (delivery,),
            ).fetchone()
            if row:
                return str(row[0])
            time.sleep(0.05)
        raise RuntimeError(f"delivery {delivery} was not applied in {timeout} s")

    def job(self, job_id: str) -> tuple[str, str, int | None]:
        row = self.hostapp_db.execute(
            "select state, conclusion, check_run_id from pr_jobs where id = %s", (job_id,)
        ).fetchone()
        return (row[0], row[1], row[2]) if row else ("", "", None)

    def serve(self, corpus: Corpus, bare: Path) -> None:
        subprocess.run(["git", "clone", "-q", "--bare", "--no-local", str(corpus.git_dir), str(bare)], check=True)
        subprocess.run(["git", "--git-dir", str(bare), "update-ref", "refs/heads/bench", corpus.commit], check=True)
        subprocess.run(["git", "--git-dir", str(bare), "symbolic-ref", "HEAD", "refs/heads/bench"], check=True)
        self.github.serve_git(corpus.name, bare)

    def index(self, names: list[str], commits: dict[str, str], timeout: float) -> dict[str, str]:
        """Index and learn every repository (all queued at once); returns the failures."""
        ids: dict[str, str] = {}
        for name in names:
            reply = self.http.post("/v1/repositories/host_index", json={"full_name": name}, headers=self.auth)
            if reply.status_code != 202:
                raise RuntimeError(f"host_index {name} -> {reply.status_code}: {reply.text[:300]}")
            ids[name] = reply.json()["repository_id"]
        pending, failed = set(names), {}
        deadline = time.monotonic() + timeout
        while pending and time.monotonic() < deadline:
            for name in sorted(pending):
                status = self.http.get(f"/v1/repositories/{ids[name]}/index/status", headers=self.auth).json()
                if status.get("state") == "failed":
                    failed[name] = status.get("error", "failed")
                    pending.discard(name)
                elif status.get("state") == "ready" and status.get("model_commit") == commits[name]:
                    pending.discard(name)
            time.sleep(1)
        failed.update({name: "not learned in time" for name in pending})
        return failed

    def replay(self, corpus: Corpus, bare: Path, prs: list[PullRequest], first_number: int) -> Tally:
        tally = Tally()
        for offset, pr in enumerate(prs):
            number = first_number + offset
            for i, head in enumerate(pr.pushes):
                self.github.set_pull(corpus.name, number, head_sha=head, base_sha=pr.base)
                self.github.set_files(corpus.name, number, pull_files(bare, pr.base, head))
                started = time.monotonic()
                action = "opened" if i == 0 else "synchronize"
                delivery = deliver(self.http, "pull_request", pull_request_event(corpus.name, number, head, action))
                job_id = self.applied(delivery)
                state, conclusion, run_id = self._wait(job_id)
                tally.pushes += 1
                tally.states[state] = tally.states.get(state, 0) + 1
                tally.conclusions[conclusion or "-"] = tally.conclusions.get(conclusion or "-", 0) + 1
                done = [
                    c.at
                    for c in self.github.calls_to("PATCH", rf"/repos/{corpus.name}/check-runs/{run_id}")
                    if (c.body or {}).get("status") == "completed"
                ]
                if done:
                    tally.latencies.append(done[-1] - started)
            self._count(corpus.name, number, tally)
        return tally

    def _wait(self, job_id: str, timeout: float = 300) -> tuple[str, str, int | None]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state, conclusion, run_id = self.job(job_id)
            if state in FINAL:
                return state, conclusion, run_id
            time.sleep(0.05)
        raise RuntimeError(f"job {job_id} did not finish: {self.job(job_id)}")

    def _count(self, full_name: str, number: int, tally: Tally) -> None:
        """What the pull request shows: its comments, repeats among them, resolved threads."""
        comments = sorted(self.github.review_comments(full_name, number), key=lambda c: c["id"])
        seen: dict[tuple[str, str], int] = {}
        for c in comments:
            # What a reader sees, hidden markers aside: the same text on the same file again is a
            # repeat (a quote-style message alone is not: its suggestion carries the line).
            shown = (c["path"], re.sub(r"<!--.*?-->", "", c["body"]).strip())
            if shown in seen:
                tally.repeats += 1
                first_line = shown[1].split("\n", 1)[0][:120]
                print(f"  repeated on {full_name}#{number}: {shown[0]}:{seen[shown]} and :{c['line']} {first_line}")
            seen[shown] = c["line"]
            tally.resolved += self.github.thread_of(c["id"])["resolved"]
        tally.prs += 1
        tally.comments += len(comments)
        tally.silent_prs += not comments


def percentile(samples: list[float], q: float) -> float:
    if not samples:
        return float("nan")
    if len(samples) == 1:
        return samples[0]
    return statistics.quantiles(sorted(samples), n=100, method="inclusive")[round(q * 100) - 1]


def row(name: str, t: Tally) -> str:
    per_pr = t.comments / t.prs if t.prs else 0.0
    resolved = t.resolved / t.comments if t.comments else 0.0
    silent = t.silent_prs / t.prs if t.prs else 0.0
    skipped = sum(n for s, n in t.states.items() if s != "completed")
    return (
        f"| {name} | {t.prs} | {t.pushes} | {t.comments} | {per_pr:.2f} | {t.repeats} | {resolved:.2f} | {silent:.2f} "
        f"| {percentile(t.latencies, 0.5):.2f} | {percentile(t.latencies, 0.95):.2f} | {skipped} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=int, default=len(REPOSITORIES), help="how many repositories")
    parser.add_argument("--prs", type=int, default=3, help="merged pull requests per repository")
    parser.add_argument("--pushes", type=int, default=4, help="at most this many pushes per pull request")
    parser.add_argument("--index-timeout", type=float, default=1200.0)
    parser.add_argument("--only", action="append", default=[], help="owner/name (repeatable)")
    args = parser.parse_args()
    chosen = corpora(args.only or list(REPOSITORIES[: args.repos]))
    if not chosen:
        print("no corpus repository is present (bench/README.md says how to prepare them); skipped")
        return 0
    plans = {c.name: merged_pull_requests(c.git_dir, c.commit, limit=args.prs, max_pushes=args.pushes) for c in chosen}
    chosen = [c for c in chosen if plans[c.name]]
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    stack = Stack()
    try:
        server = postgres(stack, WORK)
        nats_url = nats(stack, WORK)
        urls = service_databases(stack, server, f"bench_prr_{os.getpid()}")
        prefix = f"BPRR{os.getpid()}"
        stack.push("delete NATS streams", lambda: asyncio.run(delete_streams(nats_url, prefix)))
        github = e2e_standin()
        stack.push("stop the GitHub stand-in", github.close)
        # Self-hosted: one plan without repository caps (the e2e harness runs hosted).
        extra = {"CR_BILLING_MODE": "self_hosted", "CR_HOSTAPP_RECONCILE_INTERVAL_SECONDS": "3600"}
        system = build_system(nats_url, urls, prefix, WORK, extra)
        stack.push("stop services", system.stop)
        system.start(timeout=300)
        token = subprocess.run(
            [sys.executable, "-m", "services.billing.admin", "create-user", "bench-pr-review"],
            env=system.env, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        bench = Bench(system, github, next(x.split("=", 1)[1] for x in token.splitlines() if x.startswith("token=")))
        for c in chosen:
            bench.serve(c, WORK / "git" / f"{c.name.replace('/', '+')}.git")
        installed = github_fixture("installation.created.json")
        installed["installation"]["id"] = INSTALLATION
        installed["repositories"] = [
            {"id": 9000 + i, "name": c.short, "full_name": c.name, "private": False} for i, c in enumerate(chosen)
        ]
        bench.applied(deliver(bench.http, "installation", installed))  # records before the index asks
        started = time.monotonic()
        failed = bench.index([c.name for c in chosen], {c.name: c.commit for c in chosen}, args.index_timeout)
        print(f"indexed and learned {len(chosen) - len(failed)} repositories in {time.monotonic() - started:.0f} s")
        for name, why in failed.items():
            print(f"  skipped {name}: {why}")
        pooled = Tally()
        lines = []
        for c in chosen:
            if c.name in failed:
                continue
            tally = bench.replay(c, WORK / "git" / f"{c.name.replace('/', '+')}.git", plans[c.name], 1)
            pooled.add(tally)
            lines.append(row(c.name, tally))
            print(lines[-1], flush=True)
        print()
        print(HEADER)
        print("|---" * (HEADER.count("|") - 1) + "|")
        for line in lines:
            print(line)
        print(row("**pooled**", pooled))
        print()
        print(f"job states {pooled.states}; check-run conclusions {pooled.conclusions}")
        per_pr = pooled.comments / pooled.prs if pooled.prs else 0.0
        p50, p95 = percentile(pooled.latencies, 0.5), percentile(pooled.latencies, 0.95)
        print(
            f"targets: repeats {pooled.repeats} (target {TARGET_REPEATS}); comments/PR {per_pr:.2f} "
            f"(<= {TARGET_COMMENTS_PER_PR}); p50 {p50:.2f} s (<= {TARGET_P50_S}); p95 {p95:.2f} s (<= {TARGET_P95_S})"
        )
        return 0
    finally:
        stack.close()


if __name__ == "__main__":
    sys.exit(main())
