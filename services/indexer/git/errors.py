"""Typed failures of the git layer, each named by a stable machine code.

Input errors (``GitInputError``) mean the caller sent something we refuse to hand to git;
operation errors (``GitOperationError``) mean git ran and failed, timed out or grew too
large. The codes are part of the API: callers map them to HTTP/gRPC statuses.
"""

from __future__ import annotations

# Input codes (caller's fault, never retried).
VALIDATION_FAILED = "validation_failed"  # malformed URL, path, ref or sha
FORBIDDEN_SCHEME = "forbidden_scheme"  # a transport the operator has not allowed
FORBIDDEN_PORT = "forbidden_port"  # a port other than the scheme's default, not allow-listed
FORBIDDEN_HOST = "forbidden_host"  # resolves to loopback/private/link-local/... addresses
UNRESOLVABLE_HOST = "unresolvable_host"
PATH_NOT_ALLOWED = "path_not_allowed"  # a local repository outside the configured roots
NOT_A_REPOSITORY = "not_a_repository"

# Operation codes.
REF_NOT_FOUND = "ref_not_found"
EMPTY_REPOSITORY = "empty_repository"
TIMEOUT = "timeout"
OUTPUT_TOO_LARGE = "output_too_large"
REPOSITORY_TOO_LARGE = "repository_too_large"
GIT_FAILED = "git_failed"


class GitError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class GitInputError(GitError):
    """The caller supplied a URL, path or revision that is malformed or not allowed."""


class GitOperationError(GitError):
    """git failed, timed out, or produced more than we accept."""

    def __init__(self, code: str, message: str, stderr: str = "") -> None:
        super().__init__(code, message)
        self.stderr = stderr
