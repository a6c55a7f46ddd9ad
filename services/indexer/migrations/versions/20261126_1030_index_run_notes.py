"""index run notes

Revision ID: 20261126_1030
Revises: 20261122_025042
Create Date: 2026-11-26 10:30:00
"""

from alembic import op
import sqlalchemy as sa
from sqlalchemy.dialects import postgresql


revision = "20261126_1030"
down_revision = "20261122_025042"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "index_runs",
        sa.Column("notes", postgresql.JSONB(astext_type=sa.Text()), server_default="[]", nullable=False),
    )


def downgrade() -> None:
    op.drop_column("index_runs", "notes")
