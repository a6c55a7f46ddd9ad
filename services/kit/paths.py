"""The one rule for a repository-relative path sent by a client (a file under review, a
``?path=`` filter, a diff header): the gateway checks it at the edge, and the indexer and
analyzer apply the same function, so no route accepts what another refuses.

Nothing is silently repaired: ``/etc/passwd`` is refused, not read as ``etc/passwd``, and
``a//b.py`` or ``./a.py`` is refused, not read as ``a/b.py`` or ``a.py``: a path is answered
under exactly the name it was sent with, or not at all.
"""

from __future__ import annotations

import re

MAX_PATH_LENGTH = 4096
_DRIVE = re.compile(r"^[A-Za-z]:")
# A dot, slash, backslash or NUL written percent-encoded: paths travel as raw text here, so such
# a path is a client that encoded twice, or a probe for a server that decodes (``%2e%2e%2f``);
# either way no route reads it as a name, every route refuses it alike.
_ENCODED = re.compile(r"%(2e|2f|5c|00)", re.IGNORECASE)


def repo_path(path: str) -> str:
    """The path itself when it names a file the way git does, or ``ValueError`` saying what is wrong."""
    if not isinstance(path, str) or not path:
        raise ValueError("path is empty")
    if len(path) > MAX_PATH_LENGTH:
        raise ValueError(f"path longer than {MAX_PATH_LENGTH} characters")
    if "\x00" in path:  # git allows tabs and newlines in names; never a NUL
        raise ValueError("path contains a NUL byte")
    if "\\" in path:
        raise ValueError("path contains a backslash; use '/'")
    if _ENCODED.search(path):
        raise ValueError("path contains a percent-encoded '.', '/', '\\' or NUL; send it as plain text")
    if path.startswith("/") or _DRIVE.match(path):
        raise ValueError("path must be relative to the repository root")
    parts = path.split("/")
    if ".." in parts:
        raise ValueError("path must not contain '..'")
    if path == ".":
        raise ValueError("path names the repository root, not a file")
    if "." in parts:
        raise ValueError("path must not contain '.' components (write it as git names it)")
    if "" in parts:
        raise ValueError("path must not contain an empty component ('//' or a trailing '/')")
    if ".git" in (part.lower() for part in parts):
        raise ValueError("path must not point into .git")
    return path
