"""``python -m services.billing.admin create-user ...``: the same as ``codereview admin create-user``
(kept so scripts written before the CLI keep working)."""

from __future__ import annotations

from services.cli.admin import app

if __name__ == "__main__":
    app()
