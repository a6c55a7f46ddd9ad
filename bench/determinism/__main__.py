"""``python -m bench.determinism``: the same files analysed in two processes with different hash seeds.

The parent picks ``--files`` source files (200) across the repositories of ``bench/corpora.toml``
(by a hash of the path: the same every run), then runs two child processes, one with
``PYTHONHASHSEED=1`` and one with ``PYTHONHASHSEED=2``. Each child does the whole pipeline
itself: extracts every file of those repositories at the pinned commit (``services.source``),
learns as the analyzer does (``bench.quality.engines.learn_as_analyzer``: imports resolved, the
indexer's domains, tool configuration files) and reviews each picked file whole, as ``analyze``
does (``services.analyzer.review.review`` with default preferences), and writes every finding
(id, fingerprint, lines, message, evidence, suggestion, in answer order) as JSON. The measure is
the share of files whose findings are byte-identical between the two processes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import repos

TARGET = 1.0


def pick(n: int, seed: str) -> dict[str, list[str]]:
    """``n`` source files spread over the corpora: repository -> paths."""
    ranked: list[tuple[str, str, str]] = []
    for corpus in repos.corpora():
        for path in repos.tree(corpus.git_dir, corpus.commit):
            ranked.append((hashlib.sha1(f"{seed}:{corpus.name}:{path}".encode()).hexdigest(), corpus.name, path))
    out: dict[str, list[str]] = {}
    for _, name, path in sorted(ranked)[:n]:
        out.setdefault(name, []).append(path)
    return out


def child(spec: Path, dest: Path) -> None:
    import msgspec

    from bench.quality.engines import learn_as_analyzer
    from services.analyzer.preferences import effective
    from services.analyzer.review import Target, review
    from services.analyzer.state import LoadedRepo
    from services.source.extract import extract

    wanted: dict[str, list[str]] = json.loads(spec.read_text())
    results: dict[str, str] = {}
    for corpus in repos.corpora(list(wanted)):
        if corpus.name not in wanted:
            continue
        files = repos.files_at(corpus, configs=True)
        facts = {p: extract(p, d) for p, d in files.items() if not repos.is_config(p)}
        configs = {p: d for p, d in files.items() if repos.is_config(p)}
        model = learn_as_analyzer(facts, configs=configs, repository=corpus.name, commit=corpus.commit)
        entry = LoadedRepo(corpus.name, corpus.name, "", "", 0)
        for path in wanted[corpus.name]:
            data = files.get(path)
            if data is None:
                results[f"{corpus.name}:{path}"] = "missing"
                continue
            out = review(
                entry, model, [Target(path, "modified", data)], effective({}), max_bytes=1_000_000, change_level=False
            )
            results[f"{corpus.name}:{path}"] = msgspec.json.encode(out.findings).decode()
    dest.write_text(json.dumps(results, sort_keys=True))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.determinism", description=__doc__)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--seed", default="determinism-1")
    ap.add_argument("--child", nargs=2, metavar=("SPEC", "OUT"), help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / ".work" / "determinism.json"))
    args = ap.parse_args(argv)
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]))
        return 0
    start = time.perf_counter()
    wanted = pick(args.files, args.seed)
    if not wanted:
        print("no repository available: see bench/README.md (CR_BENCH_REPOS)", file=sys.stderr)
        return 0
    runs: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="cr-bench-det-") as tmp:
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps(wanted))
        for seed in ("1", "2"):
            dest = Path(tmp) / f"run{seed}.json"
            env = {**os.environ, "PYTHONHASHSEED": seed}
            cmd = [sys.executable, "-m", "bench.determinism", "--child", str(spec), str(dest)]
            subprocess.run(cmd, env=env, check=True)
            runs.append(json.loads(dest.read_text()))
    a, b = runs
    keys = sorted(set(a) | set(b))
    same = [k for k in keys if a.get(k) == b.get(k)]
    differ = [k for k in keys if a.get(k) != b.get(k)]
    findings = sum(len(json.loads(v)) for v in a.values() if v != "missing")
    share = len(same) / len(keys) if keys else 0.0
    verdict = "ok" if share >= TARGET else "MISSED"
    print(
        f"determinism: {len(same)} of {len(keys)} files ({100 * share:.1f}%) byte-identical between "
        f"PYTHONHASHSEED=1 and =2 ({findings} findings, {len(wanted)} repositories); target 100%: {verdict}"
    )
    for k in differ[:10]:
        print(f"    differs: {k}")
    result: dict[str, Any] = {
        "files": len(keys),
        "identical": len(same),
        "share": share,
        "findings": findings,
        "differ": differ,
        "seconds": round(time.perf_counter() - start),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
