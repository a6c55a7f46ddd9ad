"""Hardened git command-line layer: validated inputs, sealed git processes, bare mirrors."""

from services.indexer.git.diff import ChangedFile, LineRange, StagedFile, changed_files, changes_in_diff, staged_changes
from services.indexer.git.errors import GitError, GitInputError, GitOperationError
from services.indexer.git.log import Commit, FileChange, read_log
from services.indexer.git.mirror import MirrorResult, ensure_mirror, resolve_ref
from services.indexer.git.paths import (
    LocalRepository,
    validate_local_repository,
    validate_repo_path,
    validate_rev,
    validate_sha,
)
from services.indexer.git.runner import GitAccess, GitResult, GitStream, run_git
from services.indexer.git.tree import Blob, BlobReader, TreeEntry, list_tree, modified_entries
from services.indexer.git.urls import CloneUrl, validate_clone_url

__all__ = [
    "Blob",
    "BlobReader",
    "ChangedFile",
    "CloneUrl",
    "Commit",
    "FileChange",
    "GitAccess",
    "GitError",
    "GitInputError",
    "GitOperationError",
    "GitResult",
    "GitStream",
    "LineRange",
    "LocalRepository",
    "MirrorResult",
    "StagedFile",
    "TreeEntry",
    "changed_files",
    "changes_in_diff",
    "ensure_mirror",
    "list_tree",
    "modified_entries",
    "read_log",
    "resolve_ref",
    "run_git",
    "staged_changes",
    "validate_clone_url",
    "validate_local_repository",
    "validate_repo_path",
    "validate_rev",
    "validate_sha",
]
