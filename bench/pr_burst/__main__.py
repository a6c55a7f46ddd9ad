"""``python -m bench.pr_burst [--jobs 2000]``: a burst of pull-request deliveries, and how fast
hostapp's PR worker drains the jobs it made.

The five services run as processes (fresh databases, a private NATS, the GitHub stand-in of
tests/standins), as ``bench.soak`` starts them. ``--senders`` threads send ``--jobs`` signed
``pull_request.opened`` deliveries, each a new pull request and head on one of 25 repositories
the service has not indexed (so each job re-reads the pull request, opens a check run, asks the
index gate, and leaves the job ``waiting_index`` with the run ``queued``: a job's whole path up
to the analysis). Printed: the deliveries answered per second, and from the end of the
burst, the seconds until every job is finished and the jobs finished per second over the
whole run (from the first delivery to the last job finished).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import signal
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from bench.latency.__main__ import WORK, Stack
from bench.soak.__main__ import query, sign, start
from tests.standins.github_api import e2e_standin
from tests.standins.github_api import fixture as load_fixture

# The worker is done with a job in these states (waiting_index: acked, until the repository's
# index event requeues it; these repositories are never indexed).
DONE = ("completed", "skipped", "dropped", "superseded", "failed", "waiting_index")


def send_burst(url: str, jobs: int, senders: int) -> tuple[int, float]:
    """Send the deliveries; how many were answered 2xx, and in how many seconds."""
    github = e2e_standin()
    template = load_fixture("pull_request.opened.json")
    numbers = itertools.count(1)
    lock = threading.Lock()
    answered = [0]

    def sender() -> None:
        with httpx.Client(base_url=url, timeout=30) as http:
            while (n := next(numbers)) <= jobs:
                full_name, head = f"burst/r{n % 25}", hashlib.sha1(f"burst-{n}".encode()).hexdigest()
                github.set_pull(full_name, n, head_sha=head)
                body: dict[str, Any] = json.loads(json.dumps(template))
                body["repository"]["full_name"] = full_name
                body["number"] = body["pull_request"]["number"] = n
                body["pull_request"]["head"]["sha"] = head
                raw = json.dumps(body).encode()
                headers = {
                    "X-GitHub-Event": "pull_request",
                    "X-GitHub-Delivery": str(uuid.uuid4()),
                    "X-Hub-Signature-256": sign(raw),
                    "Content-Type": "application/json",
                }
                if http.post("/webhooks/code_host", content=raw, headers=headers).status_code < 300:
                    with lock:
                        answered[0] += 1

    started = time.monotonic()
    threads = [threading.Thread(target=sender) for _ in range(senders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answered[0], time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000, help="pull requests in the burst")
    parser.add_argument("--senders", type=int, default=8, help="threads sending deliveries")
    parser.add_argument("--timeout", type=float, default=1800.0, help="give up draining after this long")
    args, ignored = parser.parse_known_args()  # bench.run passes its arguments to every benchmark
    if ignored:
        print(f"ignoring {' '.join(ignored)}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the services are stopped
    WORK.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="pr-burst-", dir=WORK))
    stack = Stack()
    try:
        system, _ = start(stack, work)
        first = time.monotonic()
        answered, sending = send_burst(system.url, args.jobs, args.senders)
        burst_end = time.monotonic()
        count = "select count(*) filter (where state = any(%s)), count(*) from pr_jobs"
        finished = total = 0
        while time.monotonic() - burst_end < args.timeout:
            finished, total = query(system, count, list(DONE))[0]
            if total >= answered and finished == total:
                break
            time.sleep(0.5)
        drained = time.monotonic()
        states = dict(query(system, "select state, count(*) from pr_jobs group by state"))
        result = {
            "jobs": args.jobs,
            "answered": answered,
            "deliveries_per_s": round(answered / sending, 1),
            "jobs_made": total,
            "jobs_finished": finished,
            "states": states,
            "drained_after_burst_s": round(drained - burst_end, 1),
            "jobs_per_s": round(finished / (drained - first), 1),
        }
        print(
            f"pr burst: {answered}/{args.jobs} deliveries answered in {sending:.1f} s"
            f" ({result['deliveries_per_s']}/s); {finished}/{total} jobs finished"
            f" {result['drained_after_burst_s']} s after the burst ended;"
            f" {result['jobs_per_s']} jobs/s overall; states {states}"
        )
        (work / "pr_burst.json").write_text(json.dumps(result, indent=2))
    finally:
        stack.close()


if __name__ == "__main__":
    main()
