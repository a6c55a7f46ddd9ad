"""``python -m bench.indexing.at_scale``: the indexer on the scale corpus (issue #23).

The corpus is built by ``bench.indexing.scale`` (58k ``.py`` files of this machine's Python
installations, 300 commits). Measured in one run: a full index (time and peak memory) against
``ruff check --select ALL`` on the same tree, then one-, ten- and hundred-file commits each
re-indexed incrementally, by phase, with the targets printed beside. ``--json`` also writes
bench/.work/indexing-scale.json. Long: run it with ``nice -n 10`` on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.indexing.corpus import WORK, git
from bench.indexing.harness import RssMonitor, create_repository, index, ruff_measured, server_url
from bench.indexing.scale import prepare_scale
from services.devrun.infra import create_databases, drop_databases
from services.indexer.extraction import ExtractorPool
from services.kit import migrations

ROOT = Path(__file__).resolve().parents[2]
TARGET_ONE_FILE_SECONDS = 0.3
CHANGES = (1, 10, 100)


def _pick(repo: Path, count: int, seed: int) -> list[str]:
    """``count`` Python files a commit of that size would touch: one package when it can."""
    paths = sorted(p for p in git(repo, "ls-files", "*.py").splitlines() if p)
    rng = random.Random(seed)
    if count <= 10:
        packages: dict[str, list[str]] = {}
        for path in paths:
            packages.setdefault(path.rsplit("/", 1)[0], []).append(path)
        fitting = sorted(p for p, members in packages.items() if len(members) >= count)
        return rng.sample(packages[rng.choice(fitting)], count)
    return rng.sample(paths, count)


def _commit_change(repo: Path, paths: list[str], n: int) -> None:
    for path in paths:
        with (repo / path).open("a", encoding="utf-8") as handle:
            handle.write(f"\n\ndef _bench_change_{n}(value):\n    return value + {n}\n")
    git(repo, "add", "--", *paths)
    git(repo, "commit", "-q", "-m", f"Change {len(paths)} files ({n})")


def run(workers: int, repeat: int, with_ruff: bool = True, repo: Path | None = None) -> dict[str, Any]:
    repo = repo or prepare_scale()
    origin = (
        (repo / ".git" / "bench-origin").read_text().strip()
        if (repo / ".git" / "bench-origin").is_file()
        else str(repo)
    )
    start_head = git(repo, "rev-parse", "HEAD")
    server, embedded = server_url()
    name = f"bench_indexer_scale_{os.getpid()}"
    create_databases(server, [name], recreate=True)
    dsn = server.rpartition("/")[0] + "/" + name
    migrations.upgrade(ROOT / "services" / "indexer", dsn)
    mirror_dir = Path(tempfile.mkdtemp(prefix="cr-bench-mirror-"))
    pool = ExtractorPool(workers)
    changes: list[dict[str, Any]] = []
    try:
        create_repository(dsn, repo)
        pool.warm_up()
        mirror = mirror_dir / "bench.git"
        with RssMonitor() as memory:
            first_s, first = index(dsn, repo, mirror, pool, incremental=False)
        ruffs: list[float] = []
        ruff_peak = 0
        for _ in range(repeat if with_ruff else 0):
            seconds, peak = ruff_measured(repo)
            ruffs.append(seconds)
            ruff_peak = max(ruff_peak, peak)
        n = 0
        for count in CHANGES:
            for attempt in range(repeat):
                n += 1
                paths = _pick(repo, count, seed=n)
                _commit_change(repo, paths, n)
                seconds, result = index(dsn, repo, mirror, pool, incremental=True)
                changes.append(
                    {
                        "files": count,
                        "attempt": attempt,
                        "seconds": round(seconds, 3),
                        "parsed": result.files_parsed,
                        "timings": result.timings,
                        "by_delta": result.by_delta,
                    }
                )
    finally:
        git(repo, "reset", "-q", "--hard", start_head)  # the corpus stays as built
        pool.shutdown()
        shutil.rmtree(mirror_dir, ignore_errors=True)
        drop_databases(server, [name])
        if embedded is not None:
            embedded.stop()
    return {
        "corpus": origin,
        "files": first.files_total,
        "workers": workers,
        "cpus": os.cpu_count(),
        "full_index_seconds": round(first_s, 3),
        "full_timings": first.timings,
        "full_peak_rss_mb": round(memory.peak_total / 1e6, 1),
        "ruff_seconds": round(min(ruffs), 3) if ruffs else None,
        "ruff_runs": [round(t, 3) for t in ruffs],
        "ruff_peak_rss_mb": round(ruff_peak / 1e6, 1),
        "changes": changes,
    }


def table(r: dict[str, Any]) -> str:
    def phases(timings: dict[str, float]) -> str:
        return ", ".join(f"{k} {v:.3f}" for k, v in timings.items() if k != "total")

    lines = [
        f"Indexing at scale: {r['corpus']}; {r['files']} files; {r['cpus']} CPUs, {r['workers']} workers",
        "",
        f"{'full index (first, clone included)':<40} {r['full_index_seconds']:8.2f} s"
        f"  peak RSS {r['full_peak_rss_mb']:.0f} MB  ({phases(r['full_timings'])})",
    ]
    if r["ruff_seconds"]:
        lines += [
            f"{'ruff check --select ALL --no-cache':<40} {r['ruff_seconds']:8.2f} s"
            f"  peak RSS {r['ruff_peak_rss_mb']:.0f} MB  (runs {r['ruff_runs']})",
            f"{'full / ruff':<40} {r['full_index_seconds'] / r['ruff_seconds']:8.2f} x time,"
            f" {r['full_peak_rss_mb'] / max(r['ruff_peak_rss_mb'], 1):.2f} x memory",
        ]
    lines += [
        "",
        f"{'incremental re-index (server side)':<40} {'seconds':>8}  target    phases",
    ]
    for change in r["changes"]:
        # Server side: the pipeline and the switch of the run's final transaction.
        total = change["timings"].get("total", change["seconds"]) + change["timings"].get("switch", 0.0)
        target = f"<= {TARGET_ONE_FILE_SECONDS}" if change["files"] == 1 else "grows with the change"
        verdict = ("ok" if total <= TARGET_ONE_FILE_SECONDS else "MISSED") if change["files"] == 1 else ""
        lines.append(
            f"{change['files']:>4} file(s) changed, run {change['attempt'] + 1:<16} {total:8.3f}"
            f"  {target} {verdict}  parsed {change['parsed']}; {phases(change['timings'])};"
            f" by delta: {', '.join(change.get('by_delta', [])) or 'none'}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.indexing.at_scale", description=__doc__)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeat", type=int, default=2, help="runs of ruff and of each change size")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-ruff", action="store_true", help="leave the ruff baseline out (a quicker run)")
    parser.add_argument("--repo", type=Path, help="a copy of the corpus to use instead of bench/.work/corpus/scale")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    result = run(args.workers, args.repeat, with_ruff=not args.no_ruff, repo=args.repo)
    result["bench_seconds"] = round(time.perf_counter() - started, 1)
    print(table(result))
    if args.json:
        WORK.mkdir(parents=True, exist_ok=True)
        (WORK / "indexing-scale.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":  # extraction workers are spawned and re-import this module
    sys.exit(main())
