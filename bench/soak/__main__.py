"""``python -m bench.soak [--seconds 600]``: sustained mixed traffic against a running stack,
with NATS restarted once and a service killed once, and what was lost, flapped or duplicated.

The five services run as processes (fresh databases on the local PostgreSQL; a private NATS,
so that restarting it touches nothing else), the GitHub API is the stand-in of tests/standins.
For ``--seconds``:

* signed ``pull_request`` webhooks from ``--senders`` threads, as fast as they are answered;
  every fifth pull request is delivered again under a new delivery id with the same head (a
  re-request), every seventh under the same id (a redelivery), every third again 20 s later
  as ``reopened`` (its job has finished by then: no second review);
* ``/v1`` reads (repositories, index status, domains, history) and analyses of one file;
* an index of the registered repository every minute;
* ``/readyz`` polled four times a second;
* at a third of the run NATS is stopped for 5 s and started again (same port and store); at
  two thirds hostapp is killed with SIGKILL and started again a second later, as ``make run``'s
  supervisor does.

It prints deliveries answered 2xx and how many of them hostapp's database holds (the rest are
lost), the seconds ``/readyz`` was not 200 outside the injected faults (a fault's window ends
at the first 200 after it), heads with more than one check run or review (duplicates), and the
p50/p99 latency and error counts per request class.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import itertools
import json
import os
import signal
import statistics
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.latency.__main__ import WORK, _plans_env, create_token
from bench.stack import Stack, postgres, service_databases
from services.devrun.infra import EmbeddedNats
from tests.e2e.harness import RunningSystem, build_system
from tests.indexer.support import sample_repo
from tests.standins.github_api import GitHubStandIn, e2e_standin
from tests.standins.github_api import fixture as load_fixture

SECRET = "e2e-code-host-secret"  # build_system's webhook secret
NATS_DOWN_SECONDS = 5.0
KILLED = "hostapp"
READY_POLL_SECONDS = 0.25


@dataclass
class Window:
    name: str
    start: float
    end: float = float("inf")  # the first /readyz 200 after the fault was undone
    undone: bool = False  # NATS started again, the killed service started again


@dataclass
class Record:
    """What the load threads saw; every list is appended from several threads (GIL-atomic)."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    answers: dict[str, list[tuple[float, int]]] = field(default_factory=lambda: defaultdict(list))  # (time, status)
    answered: set[str] = field(default_factory=set)  # delivery ids answered 2xx
    readiness: list[tuple[float, int]] = field(default_factory=list)  # (time, status; 0 = no answer)
    faults: list[Window] = field(default_factory=list)
    indexes: Counter[str] = field(default_factory=Counter)

    def timed(self, kind: str, call: Callable[[], httpx.Response]) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            reply = call()
        except httpx.HTTPError:
            self.answers[kind].append((time.monotonic(), 0))
            return None
        self.latencies[kind].append((time.perf_counter() - started) * 1000)
        self.answers[kind].append((time.monotonic(), reply.status_code))
        return reply

    def in_fault(self, at: float) -> bool:
        return any(w.start <= at <= w.end for w in self.faults)


def plans() -> str:
    """The bench plans (rate limits out of the way) with the free plan's analysis cap lifted too:
    ten minutes of analyses would otherwise measure 429 quota_exceeded after the 200th."""
    catalogue = json.loads(_plans_env())
    for plan in catalogue:
        if plan["id"] == "free":
            plan["caps"]["analyses"] = 10**9
    return json.dumps(catalogue)


def start(stack: Stack, work: Path) -> tuple[RunningSystem, EmbeddedNats]:
    nats = EmbeddedNats(work / "nats")
    nats_url = nats.start()
    stack.push("nats", nats.stop)
    urls = service_databases(stack, postgres(stack, work), f"bench_soak_{os.getpid()}")
    system = build_system(nats_url, urls, f"SOAK{os.getpid()}", work, extra_env={"CR_BILLING_PLANS": plans()})
    stack.push("stop services", system.stop)
    system.start(timeout=120)
    return system, nats


def sign(body: bytes) -> str:
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


class Load:
    def __init__(self, system: RunningSystem, github: GitHubStandIn, token: str, repo_id: str, until: float) -> None:
        self.system = system
        self.github = github
        self.auth = {"Authorization": f"Bearer {token}"}
        self.repo_id = repo_id
        self.until = until
        self.record = Record()
        self.numbers = itertools.count(1)
        self.template = load_fixture("pull_request.opened.json")
        self.sent: list[tuple[float, dict[str, Any]]] = []  # (when, body) of every third pull request

    def running(self) -> bool:
        return time.monotonic() < self.until

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.system.url, timeout=30)

    def _deliver(self, http: httpx.Client, body: dict[str, Any], delivery: str) -> None:
        raw = json.dumps(body).encode()
        headers = {
            "X-GitHub-Event": "pull_request",
            "X-GitHub-Delivery": delivery,
            "X-Hub-Signature-256": sign(raw),
            "Content-Type": "application/json",
        }
        reply = self.record.timed("webhook", lambda: http.post("/webhooks/code_host", content=raw, headers=headers))
        if reply is not None and reply.status_code < 300:
            self.record.answered.add(delivery)

    def webhooks(self) -> None:
        with self.client() as http:
            while self.running():
                n = next(self.numbers)
                full_name, head = f"soak/r{n % 25}", hashlib.sha1(str(n).encode()).hexdigest()
                self.github.set_pull(full_name, n, head_sha=head)
                body = json.loads(json.dumps(self.template))
                body["repository"]["full_name"] = full_name
                body["number"] = body["pull_request"]["number"] = n
                body["pull_request"]["head"]["sha"] = head
                delivery = str(uuid.uuid4())
                self._deliver(http, body, delivery)
                if n % 5 == 0:  # the same head again, as a re-request does
                    self._deliver(http, {**body, "action": "synchronize"}, str(uuid.uuid4()))
                if n % 7 == 0:  # a redelivery keeps its id
                    self._deliver(http, body, delivery)
                if n % 3 == 0:
                    self.sent.append((time.monotonic(), body))

    def late_deliveries(self) -> None:
        """The same head again 20 s later under a new id (a reopen, GitHub's own resend): its job
        has had time to finish, and a finished head must not be reviewed a second time."""
        with self.client() as http:
            done = 0
            while self.running():
                due = [body for at, body in self.sent[done:] if at < time.monotonic() - 20.0]
                for body in due:
                    self._deliver(http, {**body, "action": "reopened"}, str(uuid.uuid4()))
                done += len(due)
                time.sleep(1.0)

    def reads(self) -> None:
        paths = ["/v1/repositories", "index/status", "domains", "history"]
        with self.client() as http:
            for path in itertools.cycle(paths):
                if not self.running():
                    return
                url = path if path.startswith("/") else f"/v1/repositories/{self.repo_id}/{path}"
                self.record.timed("read", lambda url=url: http.get(url, headers=self.auth))

    def analyses(self) -> None:
        body = {"path": "app/api.py", "content": "def get_user(name):\n    return name\n"}
        url = f"/v1/repositories/{self.repo_id}/analyze"
        with self.client() as http:
            while self.running():
                self.record.timed("analyze", lambda: http.post(url, json=body, headers=self.auth))

    def indexes(self) -> None:
        url = f"/v1/repositories/{self.repo_id}/index_repo"
        with self.client() as http:
            while self.running():
                reply = self.record.timed("index", lambda: http.post(url, headers=self.auth))
                self.record.indexes[str(reply.status_code if reply is not None else 0)] += 1
                wait(60.0, self.running)

    def readiness(self) -> None:
        """Polled while the traffic runs, and after it until every fault has recovered (a
        fault's window must close for the seconds outside it to mean anything)."""
        settle = self.until + 180.0
        with self.client() as http:
            while self.running() or (
                time.monotonic() < settle and any(w.end == float("inf") for w in self.record.faults)
            ):
                try:
                    status = http.get("/readyz", timeout=2).status_code
                except httpx.HTTPError:
                    status = 0
                now = time.monotonic()
                self.record.readiness.append((now, status))
                for window in self.record.faults:
                    if window.end == float("inf") and status == 200 and window.undone:
                        window.end = now
                time.sleep(READY_POLL_SECONDS)

    def faults(self, nats: EmbeddedNats, started: float, seconds: float) -> None:
        if not wait(started + seconds / 3 - time.monotonic(), self.running):
            return
        window = Window("nats restart", time.monotonic())
        self.record.faults.append(window)
        nats.stop()
        time.sleep(NATS_DOWN_SECONDS)
        nats.proc = None
        nats.start()  # same port and store
        window.undone = True
        if not wait(started + 2 * seconds / 3 - time.monotonic(), self.running):
            return
        window = Window(f"{KILLED} killed", time.monotonic())
        self.record.faults.append(window)
        self.system.kill(KILLED, signal.SIGKILL)
        time.sleep(1.0)  # make run's supervisor restarts a service after about a second
        self.system.start_process(KILLED)
        window.undone = True


def wait(seconds: float, running: Callable[[], bool]) -> bool:
    """Sleep up to ``seconds`` while the run lasts; False when it ended first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not running():
            return False
        time.sleep(min(0.5, max(deadline - time.monotonic(), 0)))
    return running()


def query(system: RunningSystem, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    url = system.layout.database_urls["hostapp"].replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url) as conn:
        return conn.execute(sql, params).fetchall()


def not_ready_seconds(record: Record) -> tuple[float, float]:
    """Seconds /readyz was not 200: (outside the fault windows, inside them)."""
    outside = inside = 0.0
    for (at, status), (nxt, _) in itertools.pairwise(record.readiness):
        if status == 200:
            continue
        if record.in_fault(at):
            inside += nxt - at
        else:
            outside += nxt - at
    return outside, inside


def duplicates(github: GitHubStandIn) -> tuple[int, int]:
    """Heads with more than one check run, and (repository, number, head) with more than one review."""
    runs = Counter((c.path, c.body.get("head_sha")) for c in github.calls_to("POST", r"/repos/.+/check-runs"))
    reviews = Counter(
        (c.path, (c.body or {}).get("commit_id")) for c in github.calls_to("POST", r"/repos/.+/pulls/\d+/reviews")
    )
    return sum(1 for n in runs.values() if n > 1), sum(1 for n in reviews.values() if n > 1)


def percentile(samples: list[float], q: int) -> float:
    if len(samples) < 2:
        return samples[0] if samples else 0.0
    return statistics.quantiles(sorted(samples), n=100, method="inclusive")[q - 1]


def report(load: Load, seconds: float) -> dict[str, Any]:
    record, system = load.record, load.system
    answered = sorted(record.answered)
    sql = "select delivery_id from webhook_deliveries where delivery_id = any(%s)"
    stored = {row[0] for row in query(system, sql, answered)}
    duplicate_jobs = query(
        system,
        "select count(*) from (select 1 from pr_jobs group by installation_id, repo_key, pr_number, head_sha"
        " having count(*) > 1) d",
    )[0][0]
    runs, reviews = duplicates(load.github)
    outside, inside = not_ready_seconds(record)
    classes = {}
    for kind, samples in sorted(record.latencies.items()):
        failed = [(at, s) for at, s in record.answers[kind] if s >= 500 or s == 0]
        unexplained = [s for at, s in failed if not record.in_fault(at)]
        classes[kind] = {
            "n": len(samples),
            "per_s": round(len(samples) / seconds, 1),
            "p50_ms": round(percentile(samples, 50), 1),
            "p99_ms": round(percentile(samples, 99), 1),
            "failed_in_faults": len(failed) - len(unexplained),
            "5xx_outside_faults": sum(1 for s in unexplained if s >= 500),
            "no_answer_outside_faults": sum(1 for s in unexplained if s == 0),
            "4xx": sum(1 for _, s in record.answers[kind] if 400 <= s < 500),
            "statuses": dict(sorted(Counter(str(s) for _, s in record.answers[kind]).items())),
        }
    return {
        "seconds": seconds,
        "deliveries_answered": len(answered),
        "deliveries_stored": len(stored & set(answered)),
        "deliveries_lost": len(set(answered) - stored),
        "readyz_not_200_outside_faults_s": round(outside, 2),
        "readyz_not_200_in_faults_s": round(inside, 2),
        "faults": [{"name": w.name, "recovered_after_s": round(w.end - w.start, 1)} for w in record.faults],
        "duplicate_jobs": duplicate_jobs,
        "heads_with_two_check_runs": runs,
        "duplicate_reviews": reviews,
        "index_triggers": dict(record.indexes),
        "classes": classes,
    }


def print_table(result: dict[str, Any]) -> None:
    print(f"\nsoak: {result['seconds']:.0f} s of mixed traffic; faults: {result['faults']}")
    rows = [
        ("deliveries answered 2xx", result["deliveries_answered"], ""),
        ("deliveries stored", result["deliveries_stored"], ""),
        ("deliveries lost", result["deliveries_lost"], "target 0"),
        ("/readyz not 200 outside faults (s)", result["readyz_not_200_outside_faults_s"], "target 0"),
        ("/readyz not 200 during faults (s)", result["readyz_not_200_in_faults_s"], ""),
        ("duplicate PR jobs (same head)", result["duplicate_jobs"], "target 0"),
        ("heads with two check runs", result["heads_with_two_check_runs"], "target 0"),
        ("duplicate reviews", result["duplicate_reviews"], "target 0"),
        ("index triggers by status", result["index_triggers"], ""),
    ]
    for label, value, note in rows:
        print(f"  {label:<38} {value!s:>12}  {note}")
    head = f"  {'class':<10} {'n':>7} {'per s':>7} {'p50 ms':>9} {'p99 ms':>9} {'4xx':>6}"
    print(f"\n{head} {'5xx/none in faults':>19} {'5xx outside':>12} {'none outside':>13}")
    for kind, c in result["classes"].items():
        print(
            f"  {kind:<10} {c['n']:>7} {c['per_s']:>7} {c['p50_ms']:>9} {c['p99_ms']:>9} {c['4xx']:>6} "
            f"{c['failed_in_faults']:>19} {c['5xx_outside_faults']:>12} {c['no_answer_outside_faults']:>13}"
        )
    for kind, c in result["classes"].items():
        print(f"  {kind} statuses: {c['statuses']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="length of the traffic (default 10 minutes)")
    parser.add_argument("--senders", type=int, default=4, help="threads sending webhooks")
    parser.add_argument("--readers", type=int, default=2, help="threads reading /v1")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="soak-", dir=WORK))
    stack = Stack()
    try:
        system, nats = start(stack, work)
        github = e2e_standin()
        token = create_token(system)
        auth = {"Authorization": f"Bearer {token}"}
        sample_repo(work / "repos" / "soak", commits=3)
        with httpx.Client(base_url=system.url, headers=auth, timeout=60) as http:
            repo_id = http.post("/v1/repositories", json={"path": str(work / "repos" / "soak")}).json()["id"]
            assert http.post(f"/v1/repositories/{repo_id}/index_repo").status_code == 202
            wait(120, lambda: http.get(f"/v1/repositories/{repo_id}/index/status").json()["state"] != "ready")
        started = time.monotonic()
        load = Load(system, github, token, repo_id, started + args.seconds)
        threads = [threading.Thread(target=load.webhooks) for _ in range(args.senders)]
        threads += [threading.Thread(target=load.reads) for _ in range(args.readers)]
        threads += [
            threading.Thread(target=t) for t in (load.late_deliveries, load.analyses, load.indexes, load.readiness)
        ]
        threads.append(threading.Thread(target=load.faults, args=(nats, started, args.seconds)))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        result = report(load, args.seconds)
        print_table(result)
        (work / "soak.json").write_text(json.dumps(result, indent=2))
        print(f"\n  logs and soak.json: {work}")
    finally:
        stack.close()


if __name__ == "__main__":
    main()
