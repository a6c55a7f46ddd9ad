"""Which files of a tree the index may store: only those every API can address again.

A path the API refuses (``services.kit.paths``: longer than 4,096 characters, so also a tree
nested thousands deep; a backslash; a component git allows but the one path rule refuses)
could be stored, but never read, analyzed or filtered by; it would only be dead weight that
answers differently from what it claims. Such files are left out, and the run's notes say
how many and which, so the user learns why a file is missing instead of finding a path no
route will take.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.indexer.git import TreeEntry
from services.kit.paths import repo_path

_SHOWN = 3
_SHOWN_CHARS = 80


def split_addressable(entries: Sequence[TreeEntry]) -> tuple[list[TreeEntry], list[str]]:
    """The entries to index, and the notes about those left out (empty when none is)."""
    kept: list[TreeEntry] = []
    refused: dict[str, list[str]] = {}
    for entry in entries:
        try:
            if repo_path(entry.path) == entry.path:
                kept.append(entry)
                continue
            reason = "not in the form the API takes"
        except ValueError as exc:
            reason = str(exc)
        refused.setdefault(reason, []).append(entry.path)
    notes = []
    for reason, paths in sorted(refused.items()):
        shown = ", ".join(_short(p) for p in paths[:_SHOWN])
        more = f" and {len(paths) - _SHOWN} more" if len(paths) > _SHOWN else ""
        notes.append(f"left out {len(paths)} file(s) no API can address ({reason}): {shown}{more}")
    return kept, notes


def _short(path: str) -> str:
    return repr(path if len(path) <= _SHOWN_CHARS else f"{path[:_SHOWN_CHARS]}… ({len(path)} characters)")
