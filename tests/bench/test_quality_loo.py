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


def test_every_shift_keeps_the_held_rules_held_unless_lifted() -> None:
    """Shift 0 is the engine's own thresholds, rules held loose included (engine/earned.py); a
    moved bar used to drop them, so the other shifts scored the held rules' plants and shift 0 did
    not. ``--lift-held`` lifts them at every shift."""
    from bench.quality.engines import LocalEngine, held_rules

    assert held_rules()
    for shift in (-0.05, 0.03):
        held = LocalEngine(strict_shift=shift).thresholds
        lifted = LocalEngine(strict_shift=shift, lift_held=True).thresholds
        assert all(held.held_loose(rule) for rule in held_rules())
        assert not any(lifted.held_loose(rule) for rule in held_rules())
    assert LocalEngine().thresholds is None  # the engine's own
    assert LocalEngine().held == held_rules()
    assert LocalEngine(lift_held=True).held == ()
