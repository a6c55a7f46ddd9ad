"""``python -m bench.replay``: real changes that maintainers accepted, reviewed as the app would.

Per repository of ``bench/corpora.toml`` (read from ``CR_BENCH_REPOS``, see ``bench.repos``):
the ``--commits`` first-parent commits that precede the last ``--followup`` (so that every one
has its whole follow-up window), oldest first. Each is reviewed against the repository as it was
at its first parent, like ``analyze_pr`` with the change's files and patches: the facts of every
source file at the parent (extracted by ``services.source`` as the indexer does, once per blob:
incremental), the indexer's domains and co-change pairs (its own history summary of the parent's
log), the repository's tool configuration files, the engine's ``learn``
(``bench.quality.engines.learn_as_analyzer``), then ``services.analyzer.review.review`` on the
changed files limited to their added lines (and the tool configuration files the change edits, as
``analyze_pr`` is given every file), plus the change-level findings, with default
preferences; each changed file's content at the parent is its base, so findings the parent already
had are answered apart ("already there", as ``analyze_pr`` does) and counted beside the
introduced ones: "before" figures count both, as the review did without a base. ``--window W``
learns once per W commits (at the parent of the window's first commit) when learning at every
commit is too dear.

Reports, at the strict level: findings per 100 added source lines by rule; the share of changes
with no finding; and the share of line findings a later commit resolves (Kim & Ernst, FSE 2007):
within the next ``--followup`` first-parent commits the file is deleted or the flagged line's
text (whitespace-normalized) no longer occurs in it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import repos
from bench.replay import verdicts

WORK = Path(__file__).resolve().parents[1] / ".work"
TARGET_SILENT = 0.90
TARGET_SILENT_EACH = 0.95  # issue #24: in every repository
HISTORY_DEPTH = 2000  # what the indexer reads (services.indexer.settings.history_depth)


@dataclass
class Tally:
    name: str
    commits: int = 0  # replayed commits that change reviewable source files
    no_source: int = 0  # replayed commits that change none
    silent: int = 0
    silent_before: int = 0  # no strict finding even counting those already there
    preexisting: int = 0  # strict findings on changed lines the parent already had
    preexisting_by_rule: Counter[str] = field(default_factory=Counter)
    added_lines: int = 0
    by_rule: Counter[str] = field(default_factory=Counter)
    line_findings: int = 0
    resolved: int = 0
    resolved_by_rule: Counter[str] = field(default_factory=Counter)
    line_by_rule: Counter[str] = field(default_factory=Counter)
    learn_s: float = 0.0
    review_s: float = 0.0
    examples: list[str] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)  # every strict finding, for judging


_WS = re.compile(r"\s+")


def _norm(line: str) -> str:
    return _WS.sub(" ", line).strip()


def _first_parents(corpus: repos.Corpus) -> list[str]:
    out = repos.git(corpus.git_dir, "rev-list", "--first-parent", corpus.commit).decode().split()
    return out  # newest first


def _parent(corpus: repos.Corpus, commit: str) -> str:
    try:
        return repos.git(corpus.git_dir, "rev-parse", f"{commit}^1").decode().strip()
    except Exception:
        return ""


def replay(
    corpus: repos.Corpus, n: int, followup: int, window: int, keep_examples: int, lift_held: bool = False
) -> Tally:
    from bench.quality.engines import learn_as_analyzer
    from services.analyzer.preferences import effective
    from services.analyzer.review import Target, review
    from services.analyzer.state import LoadedRepo
    from services.indexer.git.log import read_log
    from services.indexer.history import summarize_history
    from services.source.diff import parse_unified_diff
    from services.source.extract import extract

    tally = Tally(corpus.name)
    newest_first = _first_parents(corpus)
    chosen = newest_first[followup : followup + n][::-1]  # oldest first
    later = {c: newest_first[max(0, i - followup)] for i, c in enumerate(newest_first)}
    blobs = repos.Blobs(corpus.git_dir)
    facts_by_blob: dict[tuple[str, str], Any] = {}
    log = list(read_log(corpus.git_dir, corpus.commit, max_commits=HISTORY_DEPTH + n + followup + 1))
    log_at = {c.sha: i for i, c in enumerate(log)}
    prefs = effective({})
    thresholds = None
    if lift_held:
        # As a repository that raises every rule held loose (services/analyzer/engine/earned.py):
        # their would-be strict findings are recorded and judged, which is how a rule earns strict.
        from services.analyzer.engine.thresholds import DEFAULT_THRESHOLDS, Thresholds

        thresholds = Thresholds(DEFAULT_THRESHOLDS.bars)
    entry = LoadedRepo(corpus.name, corpus.name, "", "", 0)
    model: Any = None
    learned_for = -1
    try:
        for k, commit in enumerate(chosen):
            parent = _parent(corpus, commit)
            if not parent:
                continue
            raw = repos.git(corpus.git_dir, "diff", "--no-color", "-M", "-U0", parent, commit).decode(
                "utf-8", "replace"
            )
            parsed = [d for d in parse_unified_diff(raw) if not d.binary]
            diffs = [d for d in parsed if repos.wanted_path(d.path)]
            # analyze_pr is given every file of the change: a tool configuration it edits too.
            # Once each: a configuration file that is also source (eslint.config.js) is one target.
            configs_changed = [
                d
                for d in parsed
                if (repos.is_config(d.path) or repos.is_config(d.old_path or "")) and not repos.wanted_path(d.path)
            ]
            if not diffs:
                tally.no_source += 1
                continue
            if model is None or k // window != learned_for:
                t0 = time.perf_counter()
                tree = repos.tree(corpus.git_dir, parent, configs=True)
                facts = {}
                configs = {}
                for path, sha in tree.items():
                    if repos.read_as_config(path) and not repos.is_config(path):
                        data = blobs.get(sha)  # setup.py: source, and a manifest too
                        if data is not None:
                            configs[path] = data
                    if repos.is_config(path):
                        data = blobs.get(sha)
                        if data is not None:
                            configs[path] = data
                        continue
                    key = (path, sha)
                    if key not in facts_by_blob:
                        data = blobs.get(sha)
                        facts_by_blob[key] = extract(path, data) if data is not None else None
                    facts[path] = facts_by_blob[key]
                start = log_at.get(parent)
                past = log[start : start + HISTORY_DEPTH] if start is not None else []
                history = summarize_history(past, only_paths=set(tree))
                model = learn_as_analyzer(
                    facts,
                    configs=configs,
                    cochange=history.cochanges,
                    cochange_commits=max(0, history.commits - history.huge_commits),
                    repository=corpus.name,
                    commit=parent,
                    thresholds=thresholds,
                )
                learned_for = k // window
                tally.learn_s += time.perf_counter() - t0
            t0 = time.perf_counter()
            head_tree = repos.tree(corpus.git_dir, commit, configs=True)
            parent_tree = _tree_cached(corpus, parent)
            targets = []
            added_total = 0
            for d in configs_changed:
                old_sha = parent_tree.get(d.old_path or d.path)
                new_sha = head_tree.get(d.path) if d.status != "deleted" else None
                targets.append(
                    Target(
                        d.path,
                        d.status,
                        blobs.get(new_sha) if new_sha else None,
                        d.added_lines(),
                        old_path=d.old_path,
                        base=blobs.get(old_sha) if old_sha else None,
                    )
                )
            for d in diffs:
                base_sha = parent_tree.get(d.old_path or d.path) if d.status not in ("added", "copied") else None
                base = blobs.get(base_sha) if base_sha else None
                if d.status == "deleted":
                    targets.append(Target(d.path, "deleted", base=base))
                    continue
                head_sha = head_tree.get(d.path)
                data = blobs.get(head_sha) if head_sha else None
                changed = d.added_lines()
                added_total += len(changed)
                targets.append(Target(d.path, d.status, data, changed, old_path=d.old_path, base=base))
            out = review(entry, model, targets, prefs, max_bytes=1_000_000, change_level=True)
            tally.review_s += time.perf_counter() - t0
            strict = [f for f in out.findings if f.level == "strict"]
            already = [f for f in out.preexisting if f.level == "strict"]
            tally.commits += 1
            tally.added_lines += added_total
            tally.silent += not strict
            tally.silent_before += not (strict or already)
            tally.preexisting += len(already)
            tally.preexisting_by_rule.update(f.rule for f in already)
            for f in strict:
                tally.by_rule[f.rule] += 1
                tally.findings.append(_record(corpus, commit, f, head_tree, blobs))
                if len(tally.examples) < keep_examples:
                    tally.examples.append(f"{commit[:10]} {f.path}:{f.start_line} {f.rule}: {f.message[:160]}")
                if f.start_line <= 0:
                    continue
                tally.line_findings += 1
                tally.line_by_rule[f.rule] += 1
                if _resolved(corpus, blobs, later[commit], f, head_tree):
                    tally.resolved += 1
                    tally.resolved_by_rule[f.rule] += 1
    finally:
        blobs.close()
    return tally


def _record(corpus: repos.Corpus, commit: str, f: Any, head_tree: dict[str, str], blobs: repos.Blobs) -> dict[str, Any]:
    """What a judge reads of a finding: where, what it says, and the flagged line's text."""
    text = ""
    sha = head_tree.get(f.path)
    data = blobs.get(sha) if sha and f.start_line > 0 else None
    if data is not None:
        lines = data.decode("utf-8", "replace").split("\n")
        if 0 < f.start_line <= len(lines):
            text = _norm(lines[f.start_line - 1])
    return {
        "repository": corpus.name,
        "language": corpus.language,
        "commit": commit,
        "fingerprint": f.fingerprint,
        "rule": f.rule,
        "path": f.path,
        "line": f.start_line,
        "text": text,
        "message": f.message,
    }


def _resolved(corpus: repos.Corpus, blobs: repos.Blobs, future: str, f: Any, head_tree: dict[str, str]) -> bool:
    sha = head_tree.get(f.path)
    data = blobs.get(sha) if sha else None
    if data is None:
        return False
    lines = data.decode("utf-8", "replace").split("\n")
    if not 0 < f.start_line <= len(lines):
        return False
    flagged = _norm(lines[f.start_line - 1])
    later_tree = _tree_cached(corpus, future)
    later_sha = later_tree.get(f.path)
    if later_sha is None:
        return True  # the file is gone
    if later_sha == sha:
        return False
    later = blobs.get(later_sha)
    if later is None:
        return True
    return flagged not in {_norm(x) for x in later.decode("utf-8", "replace").split("\n")}


_TREES: dict[tuple[str, str], dict[str, str]] = {}


def _tree_cached(corpus: repos.Corpus, commit: str) -> dict[str, str]:
    key = (corpus.name, commit)
    if key not in _TREES:
        _TREES[key] = repos.tree(corpus.git_dir, commit, configs=True)
    return _TREES[key]


def _r(a: int, b: int) -> str:
    return f"{a / b:.2f}" if b else "-"


def report(tallies: list[Tally], args: argparse.Namespace, quiet: bool = False) -> dict[str, Any]:
    if quiet:  # the JSON only, written after each repository so that a cut-short run keeps its part
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            return report(tallies, args)
    print(
        f"\nreal-change replay: {args.commits} first-parent commits per repository before the last "
        f"{args.followup} (follow-up window), learning every {args.window} commit(s), strict level"
    )
    print("  before = without the baseline (findings already there at the parent counted too)")
    print(
        f"{'repository':<30} {'changes':>7} {'silent':>6} {'before':>6} {'per100':>6} {'before':>6}"
        f" {'already':>7} {'resolved':>8} {'learn s':>7} {'review s':>8}"
    )
    for t in tallies:
        found = sum(t.by_rule.values())
        per100 = 100 / max(1, t.added_lines)
        print(
            f"{t.name[:29]:<30} {t.commits:>7} {_r(t.silent, t.commits):>6} {_r(t.silent_before, t.commits):>6}"
            f" {found * per100:>6.2f} {(found + t.preexisting) * per100:>6.2f}"
            f" {t.preexisting:>7} {_r(t.resolved, t.line_findings):>8} {t.learn_s:>7.0f} {t.review_s:>8.0f}"
        )
    commits = sum(t.commits for t in tallies)
    silent = sum(t.silent for t in tallies)
    lines = sum(t.added_lines for t in tallies)
    by_rule: Counter[str] = Counter()
    line_by_rule: Counter[str] = Counter()
    resolved_by_rule: Counter[str] = Counter()
    already_by_rule: Counter[str] = Counter()
    for t in tallies:
        already_by_rule.update(t.preexisting_by_rule)
        by_rule.update(t.by_rule)
        line_by_rule.update(t.line_by_rule)
        resolved_by_rule.update(t.resolved_by_rule)
    total = sum(by_rule.values())
    line_findings = sum(t.line_findings for t in tallies)
    resolved = sum(t.resolved for t in tallies)
    share = silent / commits if commits else None
    print(
        f"\n{commits} changes ({sum(t.no_source for t in tallies)} more touched no source file), "
        f"{lines} added source lines, {total} strict findings"
    )
    already = sum(already_by_rule.values())
    silent_before = sum(t.silent_before for t in tallies)
    print(f"{'rule':<40} {'findings':>8} {'per 100 lines':>13} {'resolved later':>14} {'already there':>13}")
    for rule in sorted(set(by_rule) | set(already_by_rule), key=lambda r: (-by_rule[r], -already_by_rule[r], r)):
        n = by_rule[rule]
        res = _r(resolved_by_rule[rule], line_by_rule[rule]) if line_by_rule[rule] else "(change)"
        print(f"{rule:<40} {n:>8} {100 * n / max(1, lines):>13.3f} {res:>14} {already_by_rule[rule]:>13}")
    print(
        f"{'all':<40} {total:>8} {100 * total / max(1, lines):>13.3f} {_r(resolved, line_findings):>14} {already:>13}"
    )
    print(
        f"before the baseline: {total + already} strict findings, {100 * (total + already) / max(1, lines):.3f} per 100"
        f" added lines, {_r(silent_before, commits)} of changes silent; {already} of them already there"
    )
    verdict = "n/a" if share is None else ("ok" if share >= TARGET_SILENT else "MISSED")
    print(f"\nchanges with no strict finding: {_r(silent, commits)}  (target >= {TARGET_SILENT:.2f}: {verdict})")
    print(
        f"line findings resolved within {args.followup} later commits: {_r(resolved, line_findings)} of {line_findings}"
    )
    worst = min(tallies, key=lambda t: t.silent / t.commits if t.commits else 1.0)
    if worst.commits:
        ok = "ok" if worst.silent / worst.commits >= TARGET_SILENT_EACH else "MISSED"
        print(
            f"worst repository: {worst.name} {_r(worst.silent, worst.commits)} of its changes silent"
            f"  (target >= {TARGET_SILENT_EACH:.2f} in every repository: {ok})"
        )
    findings = [f for t in tallies for f in t.findings]
    fair = verdicts.report(findings, verdicts.load(Path(args.verdicts)), show_unjudged=args.unjudged)
    if args.verbose:
        for t in tallies:
            for e in t.examples:
                print(f"    {t.name} {e}")
    return {
        "fair": fair,
        "findings_judged": findings,
        "commits_per_repository": args.commits,
        "window": args.window,
        "followup": args.followup,
        "changes": commits,
        "silent": silent,
        "silent_share": share,
        "added_lines": lines,
        "findings": total,
        "per_100_lines": 100 * total / max(1, lines),
        "preexisting": already,
        "preexisting_by_rule": dict(already_by_rule.most_common()),
        "silent_before": silent_before,
        "per_100_lines_before": 100 * (total + already) / max(1, lines),
        "by_rule": dict(by_rule.most_common()),
        "line_findings": line_findings,
        "resolved": resolved,
        "resolved_by_rule": dict(resolved_by_rule),
        "line_by_rule": dict(line_by_rule),
        "repositories": {
            t.name: {
                "changes": t.commits,
                "silent": t.silent,
                "added_lines": t.added_lines,
                "findings": sum(t.by_rule.values()),
                "preexisting": t.preexisting,
                "silent_before": t.silent_before,
                "line_findings": t.line_findings,
                "resolved": t.resolved,
                "examples": t.examples,
            }
            for t in tallies
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.replay", description=__doc__)
    ap.add_argument("--repos", default="", help="comma-separated substrings of repository names")
    ap.add_argument(
        "--set",
        default="unseen",
        help="bench/corpora.toml sets, comma-separated: unseen, fresh ... fresh6 (out-of-sample sets)",
    )
    ap.add_argument("--commits", type=int, default=200, help="first-parent commits per repository")
    ap.add_argument("--followup", type=int, default=50, help="later commits in which a finding may be resolved")
    ap.add_argument("--window", type=int, default=1, help="learn once per this many commits")
    ap.add_argument("--examples", type=int, default=20, help="strict findings kept per repository (--verbose)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--verdicts", default=str(verdicts.VERDICTS), help="the judged findings (verdicts.tsv)")
    ap.add_argument("--unjudged", type=int, default=40, help="unjudged findings listed (they need a verdict)")
    ap.add_argument(
        "--lift-held",
        action="store_true",
        help="review as a repository raising the rules held loose until they earn strict (to judge them)",
    )
    ap.add_argument("--out", default=str(WORK / "replay.json"))
    args = ap.parse_args(argv)
    wanted = [w for w in args.repos.split(",") if w]
    tallies = []
    start = time.perf_counter()
    for corpus in repos.corpora(wanted, sets=tuple(g for g in args.set.split(",") if g)):
        t0 = time.perf_counter()
        tallies.append(replay(corpus, args.commits, args.followup, args.window, args.examples, args.lift_held))
        partial = Path(args.out).with_suffix(".partial.json")
        partial.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(report(tallies, args, quiet=True), indent=1, sort_keys=True))
        print(f"  {corpus.name}: {tallies[-1].commits} changes, {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if not tallies:
        print("no repository available: see bench/README.md (CR_BENCH_REPOS)", file=sys.stderr)
        return 0
    out = report(tallies, args)
    print(f"replay run time {time.perf_counter() - start:.0f} s")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
