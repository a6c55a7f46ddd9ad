"""pr findings, ignored rules, pending replies; job annotations and rerun

Revision ID: 20261126_1040
Revises: 20261122_025021
Create Date: 2026-11-26 10:40:00
"""

import sqlalchemy as sa
from alembic import op

revision = "20261126_1040"
down_revision = "20261122_025021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("pr_jobs", sa.Column("annotations", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("pr_jobs", sa.Column("rerun", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_table(
        "pr_findings",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("installation_id", sa.BigInteger(), nullable=False),
        sa.Column("repo_full_name", sa.String(length=300), nullable=False),
        sa.Column("repo_key", sa.String(length=300), nullable=False),
        sa.Column("pr_number", sa.Integer(), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("finding_id", sa.String(length=64), nullable=False),
        sa.Column("rule", sa.String(length=200), nullable=False),
        sa.Column("path", sa.String(length=1000), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("comment_id", sa.BigInteger(), nullable=True),
        sa.Column("thread_id", sa.String(length=200), nullable=False),
        sa.Column("thread_resolved", sa.Boolean(), nullable=False),
        sa.Column("first_head", sa.String(length=64), nullable=False),
        sa.Column("last_head", sa.String(length=64), nullable=False),
        sa.Column("fixed_by", sa.String(length=64), nullable=False),
        sa.Column("person_resolved_at_head", sa.String(length=64), nullable=False),
        sa.Column("reaction", sa.String(length=20), nullable=False),
        sa.Column("verdict", sa.String(length=20), nullable=False),
        sa.Column("verdict_comment", sa.Text(), nullable=False),
        sa.Column("verdict_sent", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pr_findings")),
        sa.UniqueConstraint(
            "installation_id",
            "repo_key",
            "pr_number",
            "fingerprint",
            name=op.f("uq_pr_findings_installation_id"),
        ),
    )
    op.create_index("ix_pr_findings_comment_id", "pr_findings", ["comment_id"], unique=False)
    op.create_index(
        "ix_pr_findings_pending",
        "pr_findings",
        ["verdict_sent"],
        unique=False,
        postgresql_where=sa.text("NOT verdict_sent"),
    )
    op.create_index("ix_pr_findings_state_updated_at", "pr_findings", ["state", "updated_at"], unique=False)
    op.create_table(
        "ignored_rules",
        sa.Column("repo_key", sa.String(length=300), nullable=False),
        sa.Column("rule", sa.String(length=200), nullable=False),
        sa.Column("by_login", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("repo_key", "rule", name=op.f("pk_ignored_rules")),
    )
    op.create_table(
        "pending_replies",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("delivery_id", sa.String(length=100), nullable=False),
        sa.Column("installation_id", sa.BigInteger(), nullable=False),
        sa.Column("repo_full_name", sa.String(length=300), nullable=False),
        sa.Column("pr_number", sa.Integer(), nullable=False),
        sa.Column("in_reply_to", sa.BigInteger(), nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("posted", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pending_replies")),
        sa.UniqueConstraint("delivery_id", name=op.f("uq_pending_replies_delivery_id")),
    )
    op.create_index(
        "ix_pending_replies_unposted",
        "pending_replies",
        ["posted"],
        unique=False,
        postgresql_where=sa.text("NOT posted"),
    )


def downgrade() -> None:
    op.drop_index("ix_pending_replies_unposted", table_name="pending_replies")
    op.drop_table("pending_replies")
    op.drop_table("ignored_rules")
    op.drop_index("ix_pr_findings_state_updated_at", table_name="pr_findings")
    op.drop_index("ix_pr_findings_pending", table_name="pr_findings")
    op.drop_index("ix_pr_findings_comment_id", table_name="pr_findings")
    op.drop_table("pr_findings")
    op.drop_column("pr_jobs", "rerun")
    op.drop_column("pr_jobs", "annotations")
