"""A change that replaces a settled library on purpose (tests moved from ``unittest`` to
``pytest``, ``requests`` swapped for ``httpx``) is not told that the repository uses the old one.

``review()`` compares the modified files whose base it was given (``Target.base``); for the others,
only when a change has such a finding on one is its base read: one ``GetFile`` at the model's
commit per such file.
"""

from __future__ import annotations

from services.analyzer.deps import Deps
from services.analyzer.engine.dependencies import PREFIX, keep_unless_replaced, replaced_jobs
from services.analyzer.review import Outcome, Target
from services.analyzer.state import LoadedRepo
from services.kit.concurrency import gather_bounded
from services.kit.errors import ServiceError
from services.source.extract import extract
from services.source.facts import FileFacts, decode


async def drop_replaced(deps: Deps, entry: LoadedRepo, targets: list[Target], outcome: Outcome) -> None:
    assert entry.model is not None
    flagged = {f.path for f in outcome.findings if f.rule.startswith(PREFIX) and f.rule != PREFIX + "new"}
    # review() already compared the files whose base it was given.
    modified = [t for t in targets if t.path in flagged and t.status in ("modified", "renamed") and t.base is None]
    if not modified:
        return
    bases = await gather_bounded(_base(deps, entry, t) for t in modified)
    replaced: set[tuple[str, str]] = set()
    for target, base in zip(modified, bases, strict=True):
        head = outcome.facts.get(target.path)
        if base is not None and head is not None:
            replaced |= replaced_jobs(base, head, entry.model.modules)
    outcome.findings = keep_unless_replaced(outcome.findings, replaced)


async def _base(deps: Deps, entry: LoadedRepo, target: Target) -> FileFacts | None:
    path = target.old_path or target.path
    try:
        reply = await deps.indexer.file(entry.id, path, commit=entry.commit)
    except ServiceError:
        return None  # no base to compare with: the finding stands
    if reply.facts:
        try:
            return decode(reply.facts)
        except Exception:  # facts of an older schema: extract them again
            pass
    return extract(path, reply.content)
