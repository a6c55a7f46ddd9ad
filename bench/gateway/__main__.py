"""``python -m bench.gateway``: the gateway's throughput under ``wrk``, beside a bare FastAPI ping.

The five services start as processes (fresh databases, their own NATS streams, rate limits
raised by a plans file but still metered). A bare FastAPI ``/ping`` app runs under the gateway's
own uvicorn options. In one run, with the same ``wrk`` settings, each is measured:

- the bare ping (before and after the others; their mean is the baseline);
- authenticated ``GET /v1/auth/validate`` and ``GET /v1/repositories``;
- ``POST /v1/repositories/{id}/analyze`` of a ~500-line file sent with its content;
- signed ``POST /webhooks/code_host`` deliveries, each with a unique delivery id; the stored rows
  are counted against the 2xx answers (a 2xx whose delivery was not stored is lost).

The machine is shared: ratios against the ping measured in the same run are the result, not the
absolute numbers. Without ``wrk`` on the PATH the benchmark says so and is skipped.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg

from bench.latency import corpus as corpora
from bench.latency.__main__ import Api, Stack, create_token, start_system, wait_learned
from services.devrun.infra import free_port
from services.devrun.system import ROOT

WORK = ROOT / "bench" / ".work"
WEBHOOK_SECRET = "bench-gateway-webhook-secret"
# The payload: a real pull_request.opened delivery, every one for the same head: hostapp records
# each, and applying them queues one job (the others find it queued); what is measured is intake.
WEBHOOK_PAYLOAD = ROOT / "tests" / "hostapp" / "fixtures" / "github" / "pull_request.opened.json"
TARGETS = {"auth_validate": 0.4, "repositories": 0.25}
TARGET_INTAKE_PER_S = 1000.0

LUA_COUNT = """
local threads = {}
ok = 0
function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end
function response(status, headers, body)
  if status >= 200 and status < 300 then ok = ok + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do total = total + t:get("ok") end
  io.write(string.format("OK2XX %d\\n", total))
end
"""

LUA_POST = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer {token}"
wrk.body = [==[{body}]==]
"""

LUA_WEBHOOK = """
local n = 0
function request()
  n = n + 1
  local headers = {{
    ["Content-Type"] = "application/json",
    ["X-GitHub-Event"] = "pull_request",
    ["X-Hub-Signature-256"] = "{signature}",
    ["X-GitHub-Delivery"] = "{prefix}-" .. tid .. "-" .. n,
  }}
  return wrk.format("POST", "/webhooks/code_host", headers, [==[{body}]==])
end
"""


def wrk_path() -> str | None:
    return shutil.which("wrk")


def run_wrk(url: str, script: Path, seconds: int, connections: int, header: str = "") -> dict[str, Any]:
    cmd = [wrk_path() or "wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", str(script)]
    if header:
        cmd += ["-H", header]
    out = subprocess.run([*cmd, url], capture_output=True, text=True, check=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    ok = int(re.search(r"OK2XX (\d+)", out).group(1))  # type: ignore[union-attr]
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 0.001, "ms": 1.0, "s": 1000.0}
    return {
        "per_s": round(rate, 1),
        "ok_per_s": round(rate * ok / total, 1) if total else 0.0,
        "requests": total,
        "ok": ok,
        "p50_ms": round(float(p50.group(1)) * scale[p50.group(2)], 2) if p50 else None,
    }


def script(work: Path, name: str, text: str) -> Path:
    path = work / f"{name}.lua"
    path.write_text(LUA_COUNT + text)
    return path


def start_ping(work: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log = open(work / "ping.log", "ab")  # noqa: SIM115 - owned by the child
    proc = subprocess.Popen(
        [sys.executable, "-m", "bench.gateway.ping", str(port)],
        env=env,  # the gateway's environment: the same CR_GATEWAY_* options, the same workers
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 180  # workers start slowly on a loaded machine
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/ping", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    raise RuntimeError("the ping app did not start")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=15)


def stored_deliveries(database_url: str, prefix: str) -> int:
    with psycopg.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM webhook_deliveries WHERE delivery_id LIKE %s", (prefix + "-%",)
        ).fetchone()
    return int(row[0]) if row else 0


def run(seconds: int, connections: int, package: str, webhooks_only: bool = False) -> dict[str, Any]:
    started = time.monotonic()
    stack = Stack()
    work = Path(tempfile.mkdtemp(prefix="cr-bench-gw-"))
    stack.push("remove work dir", lambda: shutil.rmtree(work, ignore_errors=True))
    try:
        system = start_system(stack, work, extra_env={"CR_GATEWAY_CODE_HOST_WEBHOOK_SECRET": WEBHOOK_SECRET})
        ping, ping_url = start_ping(work, system.env)
        stack.push("stop ping app", lambda: stop(ping))
        plain = script(work, "plain", "")
        body = WEBHOOK_PAYLOAD.read_bytes()
        signature = "sha256=" + hmac.new(WEBHOOK_SECRET.encode(), body, hashlib.sha256).hexdigest()
        prefix = f"bench-{os.getpid()}"
        webhook = script(work, "webhook", LUA_WEBHOOK.format(signature=signature, prefix=prefix, body=body.decode()))

        def measure(url: str, path: Path, header: str = "") -> dict[str, Any]:
            run_wrk(url, path, 2, connections, header)  # warm-up: connections, caches, JIT-free paths
            return run_wrk(url, path, seconds, connections, header)

        results: dict[str, Any] = {"ping_before": measure(f"{ping_url}/ping", plain)}
        if not webhooks_only:
            token = create_token(system)
            api = Api(system.url, token)
            stack.push("close client", api.http.close)
            corpus = corpora.build(work / "repos", package)
            repo_id = api.call("POST", "/v1/repositories", json={"path": str(corpus.repo)})[1].json()["id"]
            api.call("POST", f"/v1/repositories/{repo_id}/index_repo")
            wait_learned(api, repo_id, corpus.head)
            target = corpora.target_file(corpus)
            content = corpora.edit(corpus.repo, target).content
            results["analyze_file"] = {"path": target, "lines": content.count("\n")}
            auth = f"Authorization: Bearer {token}"
            analyze = script(
                work, "analyze", LUA_POST.format(token=token, body=json.dumps({"path": target, "content": content}))
            )
            results["auth_validate"] = measure(f"{system.url}/v1/auth/validate", plain, auth)
            results["repositories"] = measure(f"{system.url}/v1/repositories", plain, auth)
            results["analyze"] = measure(f"{system.url}/v1/repositories/{repo_id}/analyze", analyze)
        results["webhooks"] = run_wrk(system.url, webhook, seconds, connections)
        results["ping_after"] = measure(f"{ping_url}/ping", plain)
        stored = 0
        deadline = time.monotonic() + 30  # in-flight deliveries at wrk's end may still commit
        while time.monotonic() < deadline:
            now = stored_deliveries(system.layout.database_urls["hostapp"], prefix)
            if now == stored and now >= results["webhooks"]["ok"]:
                break
            stored = now
            time.sleep(1)
        results["webhooks"]["stored"] = stored
        results["webhooks"]["lost"] = max(0, results["webhooks"]["ok"] - stored)
        results["webhooks"]["stored_per_s"] = round(stored / seconds, 1)
    finally:
        stack.close()
    results["cpus"] = os.cpu_count()
    results["load_average"] = os.getloadavg()
    results["wrk"] = {"threads": 2, "connections": connections, "seconds": seconds}
    results["total_seconds"] = round(time.monotonic() - started, 1)
    return results


def table(r: dict[str, Any]) -> str:
    ping = (r["ping_before"]["ok_per_s"] + r["ping_after"]["ok_per_s"]) / 2
    w = r["wrk"]
    hook = r["webhooks"]
    rows = [("bare FastAPI GET /ping (before)", r["ping_before"], "-")]
    if "analyze" in r:  # not with --webhooks-only
        rows += [
            ("GET /v1/auth/validate", r["auth_validate"], f">= {TARGETS['auth_validate']}x ping"),
            ("GET /v1/repositories", r["repositories"], f">= {TARGETS['repositories']}x ping"),
            (f"POST analyze, {r['analyze_file']['lines']}-line file", r["analyze"], "-"),
        ]
    rows += [
        ("POST /webhooks/code_host, signed", hook, f">= {TARGET_INTAKE_PER_S:.0f}/s, 0 lost"),
        ("bare FastAPI GET /ping (after)", r["ping_after"], "-"),
    ]
    out = [
        f"Gateway benchmark: wrk -t{w['threads']} -c{w['connections']} -d{w['seconds']}s;"
        f" {r['cpus']} CPUs, load {r['load_average'][0]:.1f} (shared machine: read the ratios)",
        "",
        f"{'measure':<40} {'2xx/s':>9} {'p50 ms':>8} {'non-2xx':>8} {'x ping':>7}  {'target':<20} ok?",
    ]
    verdicts = {"POST /webhooks/code_host, signed": hook["stored_per_s"] >= TARGET_INTAKE_PER_S and hook["lost"] == 0}
    if "analyze" in r:
        verdicts["GET /v1/auth/validate"] = r["auth_validate"]["ok_per_s"] / ping >= TARGETS["auth_validate"]
        verdicts["GET /v1/repositories"] = r["repositories"]["ok_per_s"] / ping >= TARGETS["repositories"]
    for label, s, target in rows:
        verdict = {True: "ok", False: "MISSED"}.get(verdicts.get(label), "")  # type: ignore[call-overload]
        p50 = f"{s['p50_ms']:8.2f}" if s.get("p50_ms") is not None else f"{'-':>8}"
        out.append(
            f"{label:<40} {s['ok_per_s']:9.1f} {p50} {s['requests'] - s['ok']:8d} {s['ok_per_s'] / ping:7.3f}"
            f"  {target:<20} {verdict}"
        )
    out += [
        "",
        f"webhooks: {hook['ok']} answered 2xx, {hook['stored']} stored ({hook['stored_per_s']}/s),"
        f" {hook['lost']} lost; {hook['requests'] - hook['ok']} not 2xx",
        f"total {r['total_seconds']} s",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gateway", description=__doc__)
    parser.add_argument("--seconds", type=int, default=8, help="wrk duration of each measure")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--corpus-package", default=corpora.DEFAULT_PACKAGE, help="installed package to copy")
    parser.add_argument(
        "--webhooks-only", action="store_true", help="only the ping and the signed deliveries (no corpus, no /v1)"
    )
    args, ignored = parser.parse_known_args(argv)  # bench.run passes its arguments to every benchmark
    if ignored:
        print(f"ignoring {' '.join(ignored)}")
    if wrk_path() is None:
        print("bench.gateway: SKIPPED, wrk is not installed (Debian: apt-get install wrk)")
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the cleanup runs
    result = run(args.seconds, args.connections, args.corpus_package, args.webhooks_only)
    print(table(result))
    WORK.mkdir(parents=True, exist_ok=True)
    (WORK / "gateway.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {WORK / 'gateway.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
