"""The one rule for cursors and repository paths that every route and service applies."""

from __future__ import annotations

import pytest

from services.kit.errors import ServiceError
from services.kit.paging import cursor_syntax, decode_cursor, decode_offset, encode_cursor
from services.kit.paths import repo_path


def test_cursors_round_trip_and_name_their_listing() -> None:
    assert decode_offset(encode_cursor("o", "40")) == 40
    assert decode_offset("") == 0
    assert decode_cursor(encode_cursor("r", "1700000000000:abc"), "r") == "1700000000000:abc"
    with pytest.raises(ServiceError) as info:
        decode_cursor(encode_cursor("r", "1:abc"), "o")  # another listing's cursor
    assert (info.value.code, info.value.details) == ("validation_failed", {"field": "cursor"})


@pytest.mark.parametrize("cursor", ["%%%", "abc", "eA", "MTIz", "x" * 201, "bzotMQ==", "bzphYmM="])
def test_garbled_cursors_are_validation_failed_never_a_crash(cursor: str) -> None:
    # Before: an undecodable cursor on history/segments/network raised UnboundLocalError (500).
    with pytest.raises(ServiceError) as info:
        decode_offset(cursor)
    assert info.value.details == {"field": "cursor"}


def test_the_edge_accepts_any_listings_cursor_and_refuses_garbage() -> None:
    assert cursor_syntax(encode_cursor("o", "1")) == encode_cursor("o", "1")
    for bad in ("%%%", "abc", "MTIz"):
        with pytest.raises(ValueError, match="cursor"):
            cursor_syntax(bad)


@pytest.mark.parametrize("path", ["src/a.py", "ü x.py", "a b/.hidden", "100%.py", "a%20b.py"])
def test_repo_paths_are_taken_as_sent(path: str) -> None:
    assert repo_path(path) == path


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/etc/passwd",
        "/proc/self/environ",
        ".git/config",
        "a/.GIT/x",
        "../x",
        "a/../b",
        "C:/x",
        "a\\b",
        "a\x00b",
        ".",
        "a//b.py",  # the docs promise no silent repair: not read as a/b.py
        "./a.py",
        "a/./b.py",
        "a/",
        "%2e%2e%2f",  # refused by every route alike (it was 200 at review_context, 404 elsewhere)
        "%2E%2E%2Fetc%2Fpasswd",
        "a%5cb.py",
    ],
)
def test_repo_paths_outside_the_repository_are_refused_not_repaired(path: str) -> None:
    with pytest.raises(ValueError, match="path"):
        repo_path(path)
