"""Learning: a repository's facts (plus history and domains) in, a :class:`ConventionModel` out.

Pure: the caller passes the facts of every indexed file, the co-change pairs and the path ->
domain mapping computed by the indexer, the text of ``.codereview.yml`` if the repository has
one, and the texts of the tools' configuration files it found (``toolconfig.CONFIG_NAMES``).
Nothing here reads files or talks to a database.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Iterable, Mapping

import msgspec

from services.analyzer.engine import (
    cochange,
    declared,
    dependencies,
    documentation,
    formatting,
    idioms,
    naming,
    structure,
    vocabulary,
)
from services.analyzer.engine import typing as typing_family
from services.analyzer.engine.config import RepoConfig, parse_config
from services.analyzer.engine.conventions import (
    REPOSITORY,
    Convention,
    ConventionModel,
    Scope,
    excluded,
)
from services.analyzer.engine.dependencies import layering, new_libraries
from services.analyzer.engine.formatting import LENGTH
from services.analyzer.engine.formatting import imports as imports_order
from services.analyzer.engine.learn_inputs import CoChange, LearnInput, default_domain
from services.analyzer.engine.learn_memo import LearnMemo, Observed
from services.analyzer.engine.thresholds import DEFAULT_THRESHOLDS, STRICT, Thresholds
from services.analyzer.engine.toolconfig import ToolConfigs, read
from services.source.facts import FileFacts

# Rule prefix in a config override -> the family that owns it (for overrides with nothing learned).
_FAMILY_OF_PREFIX = {"typing": "documentation"}


def learn(
    files: Iterable[FileFacts],
    *,
    cochange_pairs: Iterable[CoChange] = (),
    cochange_commits: int = 0,
    domains: Mapping[str, str] | None = None,
    config: RepoConfig | str | None = None,
    tool_configs: ToolConfigs | Mapping[str, str] | None = None,
    thresholds: Thresholds | None = None,
    repository: str = "",
    commit: str = "",
    memo: LearnMemo | None = None,
) -> ConventionModel:
    """Learn every family's conventions from one repository snapshot.

    ``tool_configs``: the tools' configuration files (path -> text, or already read); what they
    declare replaces what was learned, and ``.codereview.yml`` replaces both.
    ``memo``: what the files of this repository's last learned snapshot taught (updated to this
    one): only files whose facts or domain changed are observed again. The model is the same.
    """
    cfg = parse_config(config) if isinstance(config, str) else (config or RepoConfig())
    th = cfg.apply_thresholds(thresholds or DEFAULT_THRESHOLDS)
    every = list(files)
    tools = read(tool_configs) if isinstance(tool_configs, Mapping) else tool_configs
    lint_excluded = excluded_globs(tools, every)
    ignored = {f.path for f in every if cfg.is_ignored(f.path) or excluded(f.path, lint_excluded)}
    kept = [f for f in every if not f.skipped and f.path not in ignored]
    explicit = domains is not None
    dom_map = {f.path: (domains or {}).get(f.path, "") if explicit else default_domain(f.path) for f in kept}
    packages = frozenset(tools.packages) if tools is not None else frozenset()
    inp = LearnInput(
        files=kept,
        thresholds=th,
        config=cfg,
        domains=dom_map,
        explicit_domains=explicit,
        cochange=[p for p in cochange_pairs],
        packages=packages,
    )
    base_methods = documentation.learn_base_methods(kept)
    seen: Observed | None = None
    if memo is not None and len({f.path for f in kept}) == len(kept):
        seen = memo.observe(kept, dom_map, base_methods)
        vocab, acronyms = seen.vocabulary, seen.acronyms
    else:
        vocab, acronyms = vocabulary.count_words(inp), naming.learn_acronyms(inp)
    modules = layering.module_map(kept)
    convs: list[Convention] = []
    convs += naming.learn(inp, seen.naming if seen else None)
    convs += vocabulary.learn(inp, vocab)
    convs += formatting.learn(inp, seen.formatting if seen else None)
    convs += imports_order.learn(inp, seen.imports if seen else None)
    convs += dependencies.learn(inp)
    convs += new_libraries.learn(inp, modules, frozenset(tools.libraries) if tools is not None else frozenset())
    convs += layering.learn(inp, modules)
    convs += structure.learn(inp)
    convs += documentation.learn(inp, base_methods, seen.documentation if seen else None)
    convs += typing_family.learn(inp, seen.typing if seen else None)
    convs += idioms.learn(inp, seen.idioms if seen else None)
    convs += cochange.learn(inp.cochange, th, ignored, history_commits=cochange_commits)
    convs = declared.with_declared(convs, tools, kept, th.bar(LENGTH).strict.min_share)
    convs = apply_overrides(convs, cfg)
    return ConventionModel(
        conventions=convs,
        files=len(kept),
        repository=repository,
        commit=commit,
        vocabulary=vocab,
        modules=modules,
        domains=_directory_domains(dom_map),
        acronyms=acronyms,
        base_methods=base_methods,
        stubs=typing_family.stub_paths(kept),
        declared_libraries=tuple(sorted(tools.libraries)) if tools is not None else (),
        declared_scopes={d: tuple(sorted(libs)) for d, libs in sorted(tools.scoped_libraries.items())}
        if tools is not None
        else {},
        packages=tuple(sorted(packages)),
        excluded=lint_excluded,
        commands=command_paths(tools.commands if tools else (), (f.path for f in kept), modules),
        config=cfg,
        thresholds=th,
    )


# A glob without a directory naming this share of a language's files (at least _MIN_FILES of
# them) is no exclusion of foreign files.
_MOST = 0.9
_MIN_FILES = 5


def excluded_globs(tools: ToolConfigs | None, files: list[FileFacts]) -> tuple[str, ...]:
    """The globs of the files the project's linters leave alone (``ToolConfigs.excluded``), less a
    name or extension pattern naming nearly all the files of a language: a linter pointed away from
    the code (a codespell ``skip`` of ``*.py`` for a docs-only spell check) says where it is run,
    not that the code is someone else's. A glob naming a place is kept however much it holds
    (mkdocs' JavaScript is mostly its lunr-languages copy; loguru's ruff excludes 99 of its 172
    Python files, the fixtures its exception rendering is tested on)."""
    if tools is None or not tools.excluded:
        return ()
    by_language: dict[str, list[str]] = {}
    for f in files:
        if not f.skipped and f.language:
            by_language.setdefault(f.language, []).append(f.path)
    kept = []
    for glob in sorted(tools.excluded):
        if "/" not in glob.rstrip("/"):
            counts = [(sum(excluded(p, (glob,)) for p in paths), len(paths)) for paths in by_language.values()]
            if any(total >= _MIN_FILES and hit >= _MOST * total for hit, total in counts):
                continue
        kept.append(glob)
    return tuple(kept)


# Packages of a command line's subcommands (mkdocs' ``commands/get_deps.py``, run by the
# ``mkdocs`` console script from its ``__main__``): each module is a command, its prints its output.
_COMMAND_PACKAGES = frozenset({"commands", "cli"})


def command_paths(commands: Iterable[str], paths: Iterable[str], modules: Mapping[str, str]) -> tuple[str, ...]:
    """The Python files of ``paths`` the project runs as commands (``ToolConfigs.commands``): a
    console script's module (by ``modules``, dotted name -> path, or by the path's own dotted
    name, one directory such as ``src/`` before it), a file a pre-commit hook runs, and the modules of a
    ``commands``/``cli`` package directly beside a console script's module."""
    wanted = set(commands)
    python = sorted(p for p in paths if p.endswith(".py"))
    if not wanted or not python:
        return ()
    known = set(python)
    found = {modules[c] for c in wanted if modules.get(c) in known} | (wanted & known)
    for p in python:
        dotted = p[:-3].removesuffix("/__init__").replace("/", ".")
        if any(dotted == c or dotted.partition(".")[2] == c for c in wanted if "/" not in c):
            found.add(p)
    homes = {posixpath.dirname(p) for p in found}
    for p in python:
        parent = posixpath.dirname(p)
        if posixpath.basename(parent) in _COMMAND_PACKAGES and posixpath.dirname(parent) in homes:
            found.add(p)
    return tuple(sorted(found))


def _directory_domains(dom_map: dict[str, str]) -> dict[str, str]:
    votes: dict[str, Counter[str]] = {}
    for path, dom in dom_map.items():
        if dom:
            votes.setdefault(posixpath.dirname(path), Counter())[dom] += 1
    return {d: c.most_common(1)[0][0] for d, c in votes.items()}


def apply_overrides(convs: list[Convention], cfg: RepoConfig) -> list[Convention]:
    """A team's stated choice replaces what was learned, in every scope, and is enforced."""
    if not cfg.conventions:
        return convs
    out: list[Convention] = []
    done: set[str] = set()
    for conv in convs:
        choice = cfg.conventions.get(conv.rule)
        if choice is None or (conv.rule == LENGTH and conv.language in declared.PROSE_AND_DATA):
            # A line length set for code does not govern Markdown or a CI workflow.
            out.append(conv)
            continue
        done.add(conv.rule)
        out.append(_overridden(conv, choice))
    for rule, choice in cfg.conventions.items():
        if rule in done:
            continue
        family = _FAMILY_OF_PREFIX.get(rule.split(".")[0], rule.split(".")[0])
        base = Convention(
            id=f"{rule}@{REPOSITORY}:",
            family=family,
            rule=rule,
            scope=Scope(REPOSITORY),
            choice=choice,
            share=1.0,
            count=0,
            support=0,
        )
        out.append(_overridden(base, choice))
    return out


def _overridden(conv: Convention, choice: str) -> Convention:
    return msgspec.structs.replace(
        conv,
        choice=choice,
        level=STRICT,
        confidence=1.0,
        source="config",
        description=f"{CONFIG_NOTE} sets {conv.rule} to `{choice}`"
        + (f" (learned: `{conv.choice}` in {conv.share:.0%} of {conv.count})" if conv.count else ""),
    )


CONFIG_NOTE = "`.codereview.yml`"
