"""bench.quality.loo: a repository is scored at the threshold the other repositories choose."""

from __future__ import annotations

from bench.quality.loo import Cell, choose


def _cell(planted: int, detected: int, new: int = 10, correct: int = 10, noise: int = 0) -> Cell:
    return Cell(planted, detected, new, correct, noise, 1000)


def test_the_others_choose_the_highest_recall_within_precision_and_noise() -> None:
    grid = {
        -0.05: {"a": _cell(10, 10, noise=5), "b": _cell(10, 10), "c": _cell(10, 10)},  # too noisy with a
        0.0: {"a": _cell(10, 8), "b": _cell(10, 8), "c": _cell(10, 8)},
        0.02: {"a": _cell(10, 6), "b": _cell(10, 6), "c": _cell(10, 6)},
    }
    # Scoring a, the others (b, c) prefer the looser bar; scoring b, a's noise is in the pool.
    assert choose(grid, ["b", "c"]) == -0.05
    assert choose(grid, ["a", "c"]) == 0.0


def test_imprecise_shifts_are_never_chosen_and_ties_keep_the_engine_bar() -> None:
    grid = {
        -0.02: {"a": _cell(10, 9, new=10, correct=9)},  # precision 0.90
        0.0: {"a": _cell(10, 7)},
        0.02: {"a": _cell(10, 7)},
    }
    assert choose(grid, ["a"]) == 0.0
