"""``python -m services.mcp [--http]``: the same as ``codereview mcp``."""

import sys

from services.cli.main import app

if __name__ == "__main__":
    app(["mcp", *sys.argv[1:]])
