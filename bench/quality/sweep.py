"""``--sweep``: how each threshold key's strict bar trades recall for noise.

The models are learned with permissive thresholds so every convention and finding survives with
its evidence; each grid point keeps the findings whose (share, count) clear that bar. A real run
also scopes mixed directories by the bar, so this is pessimistic about noise and the chosen values
are confirmed with a normal run afterwards.
"""

from __future__ import annotations

from collections.abc import Callable

from bench.quality.evaluate import Obs, RepoResult
from services.analyzer.engine import DEFAULT_THRESHOLDS, Bar, Threshold, Thresholds

PERMISSIVE = Thresholds({key: Bar(Threshold(0.0, 1), Threshold(0.0, 1)) for key in DEFAULT_THRESHOLDS.bars})
SHARES = (0.6, 0.7, 0.8, 0.85, 0.90, 0.93, 0.95, 0.97, 0.98, 0.99)
COUNTS = (3, 5, 8, 12, 20, 30, 50)


def key_of(rule: str) -> str:
    key = rule
    while key:
        if key in DEFAULT_THRESHOLDS.bars:
            return key
        key = key.rpartition(".")[0]
    return "default"


def _point(key: str, share: float, count: int) -> Callable[[Obs], bool]:
    def passes(o: Obs) -> bool:
        if key == "vocabulary" and o.count != o.support:
            return False  # a variant the repository already writes is never strict
        return o.share >= share - 1e-9 and o.count >= count

    return passes


def _measure(results: list[RepoResult], key: str, passes: Callable[[Obs], bool]) -> tuple[float, float, float]:
    new = correct = injected = detected = noisy = 0
    lines = sum(r.held_lines for r in results)
    for r in results:
        noisy += sum(1 for o in r.noise if key_of(o.rule) == key and passes(o))
        for inj in r.injections:
            mine = [o for o in inj.findings if key_of(o.rule) == key and passes(o)]
            new += len(mine)
            correct += sum(o.correct for o in mine)
            if key_of(inj.rule) == key and inj.kind != "control-untested":
                injected += 1
                detected += any(o.detects for o in mine)
    return (correct / new if new else 1.0), (detected / injected if injected else 0.0), noisy * 1000 / max(1, lines)


def sweep(results: list[RepoResult]) -> None:
    keys = sorted({key_of(inj.rule) for r in results for inj in r.injections})
    for key in keys:
        print(f"\n{key}: precision/recall/noise per 1,000 lines at strict bars (share x min count)")
        print("share " + "".join(f"{'n>=' + str(c):>18}" for c in COUNTS))
        for share in SHARES:
            cells = [
                "{:>18}".format("{:.2f}/{:.2f}/{:.2f}".format(*_measure(results, key, _point(key, share, c))))
                for c in COUNTS
            ]
            print(f"{share:.2f} " + "".join(cells))
        bar = DEFAULT_THRESHOLDS.bar(key).strict
        print(f"current strict bar: share {bar.min_share}, count {bar.min_count}")
