"""The one set of input rules for cursors, page sizes and repository paths, shared by every
route that takes them, so no route accepts what another refuses (422 ``validation_failed``
with ``details.field`` naming the parameter). The services apply the same rules again
(``services.kit.paths``, ``services.kit.paging``): the edge only refuses earlier. Paths in
request bodies use ``services.api.schemas.RepoPath``, the same rule."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Query
from pydantic import AfterValidator

from services.kit.paging import CURSOR_PATTERNS, MAX_CURSOR_LENGTH, OFFSET, REPOSITORIES
from services.kit.paths import MAX_PATH_LENGTH, repo_path


def _optional_repo_path(value: str) -> str:
    return repo_path(value) if value else value


# Query parameters. A cursor's pattern is the service's whole rule for it, so the document
# states it: whatever matches is read (a page past the end is empty), nothing else is.
def _cursor(kind: str) -> Any:
    return Query(
        max_length=MAX_CURSOR_LENGTH,
        pattern=CURSOR_PATTERNS[kind],
        description="The previous page's `next_cursor` (empty: the first page)",
    )


OffsetCursor = Annotated[str, _cursor(OFFSET)]
RepositoryCursor = Annotated[str, _cursor(REPOSITORIES)]
PathFilter = Annotated[
    str,
    Query(max_length=MAX_PATH_LENGTH, description="Repository-relative file path (no leading '/', no '..')"),
    AfterValidator(_optional_repo_path),
]

RequiredPath = Annotated[
    str,
    Query(
        min_length=1, max_length=MAX_PATH_LENGTH, description="Repository-relative file path (no leading '/', no '..')"
    ),
    AfterValidator(repo_path),
]


def limit(default: int, maximum: int) -> Any:
    """A page size: 1 to ``maximum``, ``default`` when omitted."""
    return Query(default, ge=1, le=maximum, description=f"Page size, 1 to {maximum}")
