"""``python -m bench.determinism``: the same files analysed in two processes with different hash seeds.

The parent picks ``--files`` source files (200) across the repositories of ``bench/corpora.toml``
(by a hash of the path: the same every run), then runs two child processes, one with
``PYTHONHASHSEED=1`` and one with ``PYTHONHASHSEED=2``. Each child does the whole pipeline
itself: extracts every file of those repositories at the pinned commit (``services.source``),
learns as the analyzer does (``bench.quality.engines.learn_as_analyzer``: imports resolved, the
indexer's domains, tool configuration files) and reviews each picked file whole, as ``analyze``
does (``services.analyzer.review.review`` with default preferences), and writes every finding
(id, fingerprint, lines, message, evidence, suggestion, in answer order) as JSON, twice per file;
then every finding at the loose level without the per-file cap (more findings, so a more sensitive
probe). The measure is the share of files whose findings are byte-identical between the two
processes, for both; and whether the same request twice in one process answered the same. As
probes of where a difference would come from, the facts of each file (msgpack) and each learned
model (``encode_model``) are compared too.
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
    from services.analyzer.engine import CheckPrefs, check, encode_model
    from services.analyzer.preferences import effective
    from services.analyzer.review import Target, review, text_of
    from services.analyzer.state import LoadedRepo
    from services.source.extract import extract

    every = CheckPrefs(level="loose", max_per_rule=100_000)
    wanted: dict[str, list[str]] = json.loads(spec.read_text())
    results: dict[str, dict[str, str]] = {}
    models: dict[str, str] = {}
    for corpus in repos.corpora(list(wanted)):
        if corpus.name not in wanted:
            continue
        files = repos.files_at(corpus, configs=True)
        facts = {p: extract(p, d) for p, d in files.items() if not repos.is_config(p)}
        configs = {p: d for p, d in files.items() if repos.is_config(p)}
        model = learn_as_analyzer(facts, configs=configs, repository=corpus.name, commit=corpus.commit)
        models[corpus.name] = hashlib.sha256(encode_model(model)).hexdigest()
        entry = LoadedRepo(corpus.name, corpus.name, "", "", 0)
        for path in wanted[corpus.name]:
            data = files.get(path)
            if data is None:
                continue
            answers = []
            for _ in range(2):  # the same request twice in one process: extraction and check again
                out = review(
                    entry,
                    model,
                    [Target(path, "modified", data)],
                    effective({}),
                    max_bytes=1_000_000,
                    change_level=False,
                )
                answers.append(msgspec.json.encode(out.findings).decode())
            again = extract(path, data)
            loose = check(again, text_of(data), model, prefs=every)
            results[f"{corpus.name}:{path}"] = {
                "served": answers[0],
                "again": answers[1],
                "every": msgspec.json.encode(loose).decode(),
                "facts": hashlib.sha256(msgspec.msgpack.encode(again)).hexdigest(),
            }
    dest.write_text(json.dumps({"files": results, "models": models}, sort_keys=True))


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
    runs: list[dict[str, dict[str, str]]] = []
    with tempfile.TemporaryDirectory(prefix="cr-bench-det-") as tmp:
        spec = Path(tmp) / "spec.json"
        spec.write_text(json.dumps(wanted))
        for seed in ("1", "2"):
            dest = Path(tmp) / f"run{seed}.json"
            env = {**os.environ, "PYTHONHASHSEED": seed}
            cmd = [sys.executable, "-m", "bench.determinism", "--child", str(spec), str(dest)]
            subprocess.run(cmd, env=env, check=True)
            runs.append(json.loads(dest.read_text()))
    models = [r["models"] for r in runs]
    runs = [r["files"] for r in runs]
    a, b = runs
    keys = sorted(set(a) | set(b))
    result: dict[str, Any] = {"files": len(keys), "seconds": 0}
    print(f"determinism over {len(keys)} files of {len(wanted)} repositories, PYTHONHASHSEED=1 vs =2:")
    for what, label in (
        ("served", "answers as served (strict, review defaults)"),
        ("every", "every finding (loose, uncapped)"),
    ):
        same = [k for k in keys if k in a and k in b and a[k][what] == b[k][what]]
        findings = sum(len(json.loads(a[k][what])) for k in keys if k in a)
        share = len(same) / len(keys) if keys else 0.0
        verdict = "ok" if share >= TARGET else "MISSED"
        print(
            f"  {label:<45} {len(same):>4} of {len(keys)} files ({100 * share:5.1f}%) byte-identical, "
            f"{findings} findings; target 100%: {verdict}"
        )
        result[what] = {
            "identical": len(same),
            "share": share,
            "findings": findings,
            "differ": [k for k in keys if k not in same],
        }
        for k in result[what]["differ"][:10]:
            print(f"      differs: {k}")
    same_facts = sum(1 for k in keys if k in a and k in b and a[k]["facts"] == b[k]["facts"])
    print(f"  {'facts of those files (msgpack)':<45} {same_facts:>4} of {len(keys)} files byte-identical")
    same_models = sorted(n for n in models[0] if models[0][n] == models[1].get(n))
    print(
        f"  {'learned models (encode_model)':<45} {len(same_models):>4} of {len(models[0])} repositories byte-identical"
    )
    result["facts_identical"] = same_facts
    result["models_identical"] = len(same_models)
    result["models"] = len(models[0])
    twice = [k for k in keys if all(r[k]["served"] == r[k]["again"] for r in runs if k in r)]
    print(f"  {'the same request twice in one process':<45} {len(twice):>4} of {len(keys)} files identical")
    result["twice_identical"] = len(twice)
    result["seconds"] = round(time.perf_counter() - start)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
