"""The spec's route and error-code tables as test data of this repository (interface_tables.md)."""

from __future__ import annotations

import re
from pathlib import Path

TABLES = Path(__file__).with_name("interface_tables.md")


def spec_routes() -> list[tuple[str, str]]:
    """(method, path) of every row of the spec's endpoint tables, paths as the spec writes them."""
    return re.findall(r"^\| (GET|POST|DELETE|PATCH|PUT) \| `([^`]+)` \|", TABLES.read_text(), re.M)


def spec_error_codes() -> set[str]:
    return set(re.findall(r"^\| \w+ \| `([a-z_]+)` \|", TABLES.read_text(), re.M))
