"""Runs localstripe on a port, in memory only: upstream pickles its whole store to the fixed
path /tmp/localstripe.pickle after every write, which parallel test sessions would share."""

from __future__ import annotations

import sys

import localstripe.resources as resources
from localstripe import server


def main() -> None:
    resources.Store.dump_to_disk = lambda self: None  # type: ignore[method-assign]
    resources.Store.try_load_from_disk = lambda self: None  # type: ignore[method-assign]
    sys.argv = ["localstripe", "--port", sys.argv[1], "--from-scratch"]
    server.start()


if __name__ == "__main__":
    main()
