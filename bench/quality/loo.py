"""``python -m bench.quality.loo``: leave-one-repository-out thresholds on the unseen corpus.

The engine's strict bars are constants chosen on the "own" corpus; nothing is fitted to the 43
unseen repositories, so ``bench.quality`` already scores every repository with thresholds chosen
on other code. This module asks what tuning on the unseen corpus itself would do, without letting
a repository's own score choose its threshold: every strict share bar is moved by each of
``--shifts``, each repository is evaluated at each shift, and each repository is then scored at the
shift the *other* repositories choose (highest pooled recall with precision >= 0.97 and noise
<= 1.0 per 1,000 untouched lines, the issue's targets; ties go to the smaller move). In process
(``--engine local`` of ``bench.quality``), one fold per repository.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.quality.corpus import WORK, unseen
from bench.quality.evaluate import RepoResult, evaluate, score

TARGET_P, TARGET_NOISE, TARGET_WORST_R, WORST_MIN_PLANTED = 0.97, 1.0, 0.80, 10


@dataclass
class Cell:
    """One repository at one shift."""

    planted: int
    detected: int
    new: int
    correct: int
    noise: int
    lines: int

    @staticmethod
    def of(r: RepoResult) -> Cell:
        _, families = score([r])
        c = Cell(0, 0, 0, 0, noise=len(r.noise), lines=r.held_lines)
        for s in families.values():
            c.planted += s.injected
            c.detected += s.detected
            c.new += s.new
            c.correct += s.correct
        return c


def _pooled(cells: list[Cell]) -> tuple[float, float, float]:
    planted = sum(c.planted for c in cells)
    new = sum(c.new for c in cells)
    recall = sum(c.detected for c in cells) / planted if planted else 0.0
    precision = sum(c.correct for c in cells) / new if new else 1.0
    noise = sum(c.noise for c in cells) * 1000 / max(1, sum(c.lines for c in cells))
    return recall, precision, noise


def choose(grid: dict[float, dict[str, Cell]], names: list[str]) -> float:
    """The shift ``names`` choose: highest pooled recall within the precision and noise targets."""
    best: tuple[float, float, float] | None = None
    for shift, cells in grid.items():
        recall, precision, noise = _pooled([cells[n] for n in names])
        if precision < TARGET_P or noise > TARGET_NOISE:
            continue
        key = (recall, -abs(shift), -shift)
        if best is None or key > best:
            best = key
    return -best[2] if best is not None else 0.0


def _r(c: Cell) -> str:
    return f"{c.detected / c.planted:.2f}" if c.planted else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.quality.loo", description=__doc__)
    ap.add_argument("--shifts", default="-0.05,0,0.03", help="moves of every strict share bar")
    ap.add_argument("--repos", default="", help="comma-separated substrings of repository names")
    ap.add_argument("--seed", default="bench-1")
    ap.add_argument("--holdout", type=float, default=0.10)
    ap.add_argument("--out", default=str(WORK / "quality-loo.json"))
    ap.add_argument(
        "--lift-held",
        action="store_true",
        help="score the rules held loose (engine/earned.py) at the level their evidence earns, at every shift",
    )
    args = ap.parse_args(argv)
    from bench.quality.engines import LocalEngine

    shifts = sorted({float(x) for x in args.shifts.split(",")})
    sources = unseen([w for w in args.repos.split(",") if w])
    if not sources:
        print("no repository available: see bench/README.md (CR_BENCH_REPOS)", file=sys.stderr)
        return 0
    start = time.perf_counter()
    grid: dict[float, dict[str, Cell]] = {}
    facts: dict[tuple[str, str], object] = {}  # extraction does not depend on the shift: done once
    for shift in shifts:
        # Held rules stay held at every shift unless lifted (until 2026-11-26 a non-zero shift
        # lifted them while shift 0 kept them: the shifts were not compared like with like).
        engine = LocalEngine(strict_shift=shift, lift_held=args.lift_held)
        engine._facts = facts
        grid[shift] = {}
        for src in sources:
            r = evaluate(src, engine, seed=f"{args.seed}-0", holdout=args.holdout)
            grid[shift][src.name] = Cell.of(r)
        print(f"  shift {shift:+.2f}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    names = [s.name for s in sources]
    print(f"\n=== leave-one-repository-out: every strict share bar moved by one of {shifts} ===")
    for shift in shifts:
        recall, precision, noise = _pooled(list(grid[shift].values()))
        print(f"all {len(names)} at {shift:+.2f}: recall {recall:.2f}, precision {precision:.2f}, noise {noise:.2f}")
    print(f"\n{'repository':<30} {'planted':>7} {'R own':>6} {'chosen':>7} {'R loo':>6} {'P loo':>6} {'noise':>6}")
    loo: dict[str, tuple[float, Cell]] = {}
    for name in names:
        shift = choose(grid, [n for n in names if n != name])
        cell = grid[shift][name]
        loo[name] = (shift, cell)
        p = f"{cell.correct / cell.new:.2f}" if cell.new else "-"
        noise = cell.noise * 1000 / max(1, cell.lines)
        print(
            f"{name[:29]:<30} {cell.planted:>7} {_r(grid[0.0][name]) if 0.0 in grid else '-':>6} {shift:>+7.2f}"
            f" {_r(cell):>6} {p:>6} {noise:>6.2f}"
        )
    recall, precision, noise = _pooled([c for _, c in loo.values()])
    scored = [(n, c) for n, (_, c) in loo.items() if c.planted >= WORST_MIN_PLANTED]
    worst = min(scored, key=lambda nc: (nc[1].detected / nc[1].planted, nc[0]), default=None)
    print(f"\nleave-one-out pooled: recall {recall:.2f}, precision {precision:.2f}, noise {noise:.2f}")
    if worst is not None:
        w = worst[1].detected / worst[1].planted
        verdict = "ok" if w >= TARGET_WORST_R else "MISSED"
        label = f"leave-one-out worst repository recall ({worst[0]}, {WORST_MIN_PLANTED}+ plants)"
        print(f"{label}: {w:.2f} >= {TARGET_WORST_R} {verdict}")
    print(f"run time {time.perf_counter() - start:.0f} s")
    out = {
        "shifts": shifts,
        "grid": {str(s): {n: vars(c) for n, c in cells.items()} for s, cells in grid.items()},
        "loo": {n: {"shift": s, **vars(c)} for n, (s, c) in loo.items()},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
