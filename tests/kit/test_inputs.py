"""The one rule for cursors and repository paths that every route and service applies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.kit.errors import ServiceError
from services.kit.paging import (
    CURSOR_PATTERNS,
    MAX_CURSOR_LENGTH,
    REPOSITORIES,
    decode_cursor,
    decode_offset,
    encode_cursor,
    encode_offset,
)
from services.kit.paths import repo_path


def test_cursors_round_trip_and_name_their_listing() -> None:
    assert decode_offset(encode_offset(40)) == 40
    assert decode_offset("") == 0
    key = "1700000000000." + "a" * 32
    assert decode_cursor(encode_cursor(REPOSITORIES, key), REPOSITORIES) == key
    with pytest.raises(ServiceError) as info:
        decode_offset(encode_cursor(REPOSITORIES, key))  # another listing's cursor
    assert (info.value.code, info.value.details) == ("validation_failed", {"field": "cursor"})


# Before: base64 cursors, so "MTIz" or "0000" matched the document's pattern and were refused.
BAD = ["%%%", "abc", "eA", "MTIz", "0000", "x" * 201, "bzotMQ==", "o", "o-1", "o1.5", "o1\n", "o" + "9" * 13, "r1.abc"]


@pytest.mark.parametrize("cursor", BAD)
def test_garbled_cursors_are_validation_failed_never_a_crash(cursor: str) -> None:
    # Before: an undecodable cursor on history/segments/network raised UnboundLocalError (500).
    with pytest.raises(ServiceError) as info:
        decode_offset(cursor)
    assert info.value.details == {"field": "cursor"}


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_every_cursor_the_pattern_admits_is_read(data: st.DataObject) -> None:
    # The pattern is what the OpenAPI document publishes: nothing it admits may be refused.
    for kind, pattern in CURSOR_PATTERNS.items():
        cursor = data.draw(st.from_regex(pattern, fullmatch=True))
        assert len(cursor) <= MAX_CURSOR_LENGTH
        value = decode_cursor(cursor, kind)
        assert value is None if cursor == "" else cursor == kind + str(value)


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
