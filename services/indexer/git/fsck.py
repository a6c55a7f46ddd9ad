"""What git's object checks (``transfer.fsckObjects``) may let through, and what they refuse.

A clone or fetch checks every object it receives. Real repositories carry history that git
itself wrote badly years ago (a 2010 author line without a space before ``<``, a zero-padded
file mode, an odd time zone): refusing those would make a user's repository unindexable, and
nothing in them reaches a path or a program. Those message ids are downgraded to warnings,
which git prints and we keep as the run's notes. Every other id keeps git's strict
severity: tree entries named ``.git``, ``.``, ``..`` or containing ``/``, duplicate or
unsorted entries, hostile ``.gitmodules``/``.gitattributes`` (submodule names that climb out,
URLs that look like options, symlinked files), broken object links. Those end the fetch, and
the run fails with ``unsafe_objects`` and git's own message ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from services.indexer.git.errors import GitError, GitOperationError

UNSAFE_OBJECTS = "unsafe_objects"

# Only header formatting of commits and tags, and how a file mode is spelled: what a reader of
# the history sees (a name, an e-mail, a date) may be odd, but no path, link or program is.
MALFORMED_HISTORY_IDS: tuple[str, ...] = (
    "badDate",
    "badDateOverflow",
    "badEmail",
    "badName",
    "badTimezone",
    "missingEmail",
    "missingNameBeforeEmail",
    "missingSpaceBeforeDate",
    "missingSpaceBeforeEmail",
    "multipleAuthors",
    "zeroPaddedDate",
    "nulInCommit",
    "badFilemode",
    "zeroPaddedFilemode",
    "badTagName",
    "missingTaggerEntry",
    "extraHeaderEntry",
)

FSCK_CONFIG: tuple[tuple[str, str], ...] = (
    ("transfer.fsckObjects", "true"),
    *((f"fetch.fsck.{msg_id}", "warn") for msg_id in MALFORMED_HISTORY_IDS),
)

# index-pack's report of one object: "warning: object <sha>: <msgId>: <text>" (or "error: ...").
_FINDING = re.compile(r"^(warning|error): object ([0-9a-f]{40,64}): ([A-Za-z]+): (.*)$")


@dataclass(frozen=True)
class FsckFinding:
    level: str  # warning (tolerated) | error (refused)
    object_id: str
    msg_id: str
    text: str


def findings(stderr: str) -> list[FsckFinding]:
    out: list[FsckFinding] = []
    for line in stderr.splitlines():
        match = _FINDING.match(line.strip())
        if match:
            out.append(FsckFinding(*match.groups()))
    return out


def tolerated_notes(stderr: str, limit: int = 20) -> list[str]:
    """The run's notes for what was accepted as malformed history, one per message id."""
    by_id: dict[str, list[str]] = {}
    for f in findings(stderr):
        if f.level == "warning" and f.msg_id in MALFORMED_HISTORY_IDS:
            by_id.setdefault(f.msg_id, []).append(f.object_id)
    notes = []
    for msg_id, objects in sorted(by_id.items()):
        shown = ", ".join(o[:12] for o in objects[:3]) + (f" and {len(objects) - 3} more" if len(objects) > 3 else "")
        notes.append(f"accepted malformed history: git fsck {msg_id} in {len(objects)} object(s) ({shown}); not unsafe")
    return notes[:limit]


def unsafe_objects(exc: GitError) -> GitOperationError | None:
    """The failure to report when git refused objects as unsafe (None for any other failure)."""
    stderr = getattr(exc, "stderr", "") or ""
    refused = [f for f in findings(stderr) if f.level == "error"]
    if not refused:
        return None
    ids = sorted({f.msg_id for f in refused})
    first = refused[0]
    return GitOperationError(
        UNSAFE_OBJECTS,
        f"the repository holds objects git refuses as unsafe ({', '.join(ids)}): "
        f"object {first.object_id[:12]}: {first.text}"[:500],
        stderr,
    )
