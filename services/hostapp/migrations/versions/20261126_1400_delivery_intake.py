"""webhook deliveries: recorded first, processed after (payload kept until then)

Revision ID: 20261126_1400
Revises: 20261126_1040
Create Date: 2026-11-26 14:00:00
"""

import sqlalchemy as sa
from alembic import op

revision = "20261126_1400"
down_revision = "20261126_1040"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("webhook_deliveries", sa.Column("payload", sa.LargeBinary(), nullable=True))
    op.add_column("webhook_deliveries", sa.Column("processed_at", sa.BigInteger(), nullable=True))
    # Arrival order: deliveries recorded in the same millisecond (or statement) keep theirs.
    op.add_column("webhook_deliveries", sa.Column("seq", sa.BigInteger(), sa.Identity(), nullable=False))
    # Payloads are written once per delivery in the request path: lz4 costs the server a
    # fraction of pglz's time (where the server has lz4; otherwise pglz stays).
    op.execute(
        "DO $$ BEGIN ALTER TABLE webhook_deliveries ALTER COLUMN payload SET COMPRESSION lz4;"
        " EXCEPTION WHEN others THEN NULL; END $$"
    )
    # Every delivery recorded before this revision was processed in the request that recorded it.
    op.execute("UPDATE webhook_deliveries SET processed_at = received_at")
    op.create_index(
        "ix_webhook_deliveries_unprocessed",
        "webhook_deliveries",
        ["seq"],
        postgresql_where=sa.text("processed_at IS NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_webhook_deliveries_unprocessed", table_name="webhook_deliveries")
    op.drop_column("webhook_deliveries", "seq")
    op.drop_column("webhook_deliveries", "processed_at")
    op.drop_column("webhook_deliveries", "payload")
