"""The repository's ``.codereview.yml``: what a team tells the engine instead of letting it guess.

Example::

    version: 1
    level: strict                # default level for PR comments (strict | loose)
    ignore:                      # never learned from, never checked (gitignore-like globs)
      - "vendor/**"
      - "**/migrations/*.py"
    disable:                     # whole families or rule ids / rule prefixes
      - idioms
      - naming.case.parameter
    conventions:                 # replace a learned choice; enforced at the strict level
      naming.case.function: snake_case
      formatting.quotes: double
      formatting.line_length: 100
      dependencies.library.http_client: httpx
    severity:                    # per rule or rule prefix: info | warning | error
      formatting: info
    thresholds:                  # per family or rule prefix, either level
      naming: {strict: {min_share: 0.9, min_count: 20}}
      documentation: {loose: {min_share: 0.8}}
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import msgspec
import yaml

from services.analyzer.engine.thresholds import Bar, Threshold, Thresholds

CONFIG_FILE = ".codereview.yml"
FAMILIES: frozenset[str] = frozenset(
    {
        "naming",
        "vocabulary",
        "formatting",
        "dependencies",
        "structure",
        "documentation",
        "idioms",
        "cochange",
        "external",
    }
)
SEVERITIES: frozenset[str] = frozenset({"info", "warning", "error"})
# "review" belongs to the code-host app (comments or annotations only, comments per push).
_KNOWN_KEYS = frozenset({"version", "level", "ignore", "disable", "conventions", "severity", "thresholds", "review"})
_RULE_RE = re.compile(r"^[a-z_]+(\.[A-Za-z0-9_\-]+)*$")


class ConfigError(ValueError):
    """The config file is invalid; ``errors`` lists every problem with its location."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


class RepoConfig(msgspec.Struct, omit_defaults=True):
    version: int = 1
    level: str = "strict"
    ignore: tuple[str, ...] = ()
    disable: tuple[str, ...] = ()
    conventions: dict[str, str] = {}
    severity: dict[str, str] = {}
    thresholds: dict[str, Bar] = {}

    def is_ignored(self, path: str) -> bool:
        return any(_glob(p).match(path) for p in self.ignore)

    def is_disabled(self, rule: str, family: str) -> bool:
        return family in self.disable or any(rule == d or rule.startswith(d + ".") for d in self.disable)

    def severity_for(self, rule: str, default: str) -> str:
        key = rule
        while key:
            if key in self.severity:
                return self.severity[key]
            key = key.rpartition(".")[0]
        return default

    def apply_thresholds(self, base: Thresholds) -> Thresholds:
        return base.merged(self.thresholds) if self.thresholds else base


@lru_cache(maxsize=1024)
def _glob(pattern: str) -> re.Pattern[str]:
    """gitignore-flavoured glob: ``**`` spans directories, ``*`` does not, a bare name matches anywhere."""
    pat = pattern.strip().lstrip("/")
    anchored = "/" in pattern.strip().rstrip("/")
    if pat.endswith("/"):
        pat += "**"
    out: list[str] = []
    i = 0
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pat.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
        i += 1
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"^{prefix}{body}(?:/.*)?$")


def path_glob(pattern: str) -> re.Pattern[str]:
    """The compiled gitignore-flavoured glob (also used for tools' per-file-ignores)."""
    return _glob(pattern)


def _threshold(raw: Any, where: str, errors: list[str], base: Threshold) -> Threshold:
    if not isinstance(raw, dict):
        errors.append(f"{where}: expected a mapping with min_share/min_count")
        return base
    unknown = set(raw) - {"min_share", "min_count"}
    if unknown:
        errors.append(f"{where}: unknown keys {sorted(unknown)}")
    share = raw.get("min_share", base.min_share)
    count = raw.get("min_count", base.min_count)
    if not isinstance(share, int | float) or isinstance(share, bool) or not 0.0 <= share <= 1.0:
        errors.append(f"{where}.min_share: expected a number between 0 and 1")
        share = base.min_share
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        errors.append(f"{where}.min_count: expected a positive integer")
        count = base.min_count
    return Threshold(float(share), count)


def _str_list(raw: Any, where: str, errors: list[str]) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, str) and x.strip() for x in raw):
        errors.append(f"{where}: expected a list of strings")
        return ()
    return tuple(x.strip() for x in raw)


def _rule_key(key: Any, where: str, errors: list[str]) -> bool:
    if not isinstance(key, str) or not _RULE_RE.match(key):
        errors.append(f"{where}: {key!r} is not a rule id")
        return False
    if key.split(".")[0] not in FAMILIES and key.split(".")[0] != "typing":
        errors.append(f"{where}: {key!r} does not name a known family ({', '.join(sorted(FAMILIES))})")
        return False
    return True


def _mapping(raw: dict[str, Any], key: str, errors: list[str]) -> dict[Any, Any]:
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.append(f"{key}: expected a mapping")
        return {}
    return value


def parse_config(text: str, base: Thresholds | None = None) -> RepoConfig:
    """Parse and validate the text of ``.codereview.yml``; an empty file is the default config."""
    from services.analyzer.engine.thresholds import DEFAULT_THRESHOLDS

    base = base or DEFAULT_THRESHOLDS
    try:
        raw = yaml.safe_load(text) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise ConfigError([f"not valid YAML: {exc}"]) from exc
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(["top level: expected a mapping"])
    errors: list[str] = [f"{k}: unknown key" for k in raw if k not in _KNOWN_KEYS]
    version = raw.get("version", 1)
    if version != 1:
        errors.append("version: only version 1 is supported")
    level = raw.get("level", "strict")
    if level not in ("strict", "loose"):
        errors.append("level: expected strict or loose")
    ignore = _str_list(raw.get("ignore"), "ignore", errors)
    disable = _str_list(raw.get("disable"), "disable", errors)
    for i, d in enumerate(disable):
        _rule_key(d, f"disable[{i}]", errors)
    conventions: dict[str, str] = {}
    for key, value in _mapping(raw, "conventions", errors).items():
        if _rule_key(key, f"conventions.{key}", errors):
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                errors.append(f"conventions.{key}: expected a scalar choice")
            else:
                conventions[key] = str(value)
    severity: dict[str, str] = {}
    for key, value in _mapping(raw, "severity", errors).items():
        if _rule_key(key, f"severity.{key}", errors):
            if value not in SEVERITIES:
                errors.append(f"severity.{key}: expected one of info, warning, error")
            else:
                severity[key] = value
    thresholds: dict[str, Bar] = {}
    for key, value in _mapping(raw, "thresholds", errors).items():
        if not _rule_key(key, f"thresholds.{key}", errors):
            continue
        if not isinstance(value, dict) or set(value) - {"strict", "loose"}:
            errors.append(f"thresholds.{key}: expected a mapping with strict and/or loose")
            continue
        current = base.bar(key)
        strict = _threshold(value.get("strict", {}), f"thresholds.{key}.strict", errors, current.strict)
        loose = _threshold(value.get("loose", {}), f"thresholds.{key}.loose", errors, current.loose)
        thresholds[key] = Bar(strict, loose)
    if errors:
        raise ConfigError(errors)
    return RepoConfig(
        version=1,
        level=level,
        ignore=ignore,
        disable=disable,
        conventions=conventions,
        severity=severity,
        thresholds=thresholds,
    )
