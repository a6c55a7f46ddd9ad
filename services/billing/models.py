"""Billing's database: users, organizations, memberships with roles, access tokens, sign-in
states, subscriptions, usage, payment events and rate counters."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from services.kit.db import new_id, service_metadata
from services.kit.db import now_s as now
from services.kit.inbox import define_inbox
from services.kit.outbox import define_outbox


class Base(DeclarativeBase):
    metadata = service_metadata()


outbox = define_outbox(Base.metadata)
inbox = define_inbox(Base.metadata)


class User(Base):
    __tablename__ = "users"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    login: Mapped[str] = mapped_column(String(100), unique=True)
    email: Mapped[str] = mapped_column(String(320), default="")
    host_user_id: Mapped[int | None] = mapped_column(BigInteger, unique=True, nullable=True)
    trial_used: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[int] = mapped_column(BigInteger, default=now)


class Organization(Base):
    __tablename__ = "organizations"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    host_org_id: Mapped[int | None] = mapped_column(BigInteger, unique=True, nullable=True)
    seats: Mapped[int] = mapped_column(Integer, default=5)
    created_at: Mapped[int] = mapped_column(BigInteger, default=now)


class Membership(Base):
    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("org_id", "user_id"),)
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    org_id: Mapped[str] = mapped_column(ForeignKey("organizations.id", ondelete="CASCADE"), index=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(20))
    status: Mapped[str] = mapped_column(String(20), default="active")  # active | invited
    created_at: Mapped[int] = mapped_column(BigInteger, default=now)


class AccessToken(Base):
    __tablename__ = "access_tokens"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(10))  # session | pat
    name: Mapped[str] = mapped_column(String(100), default="")
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(12))
    created_at: Mapped[int] = mapped_column(BigInteger, default=now)
    expires_at: Mapped[int] = mapped_column(BigInteger, default=0)  # 0: never
    revoked_at: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    last_used_at: Mapped[int] = mapped_column(BigInteger, default=0)


class OAuthState(Base):
    """A sign-in ``state`` we issued (only its digest), single use, short-lived."""

    __tablename__ = "oauth_states"
    digest: Mapped[str] = mapped_column(String(64), primary_key=True)
    redirect_uri: Mapped[str] = mapped_column(String(2048), default="")
    created_at: Mapped[int] = mapped_column(BigInteger, default=now)
    expires_at: Mapped[int] = mapped_column(BigInteger, index=True)


class Subscription(Base):
    """One per owner (``user:<id>`` or ``org:<id>``); no row means the free plan."""

    __tablename__ = "subscriptions"
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    owner: Mapped[str] = mapped_column(String(64), unique=True)
    plan: Mapped[str] = mapped_column(String(40), default="free")
    status: Mapped[str] = mapped_column(String(30), default="active")
    seats: Mapped[int] = mapped_column(Integer, default=1)
    customer_id: Mapped[str | None] = mapped_column(String(255), unique=True, nullable=True)
    subscription_id: Mapped[str | None] = mapped_column(String(255), index=True, nullable=True)
    checkout_session_id: Mapped[str | None] = mapped_column(String(255), index=True, nullable=True)
    current_period_start: Mapped[int] = mapped_column(BigInteger, default=0)
    current_period_end: Mapped[int] = mapped_column(BigInteger, default=0)
    cancel_at_period_end: Mapped[bool] = mapped_column(Boolean, default=False)
    trial_end: Mapped[int] = mapped_column(BigInteger, default=0)
    # `created` of the newest provider event applied: an older event must not roll state back.
    provider_state_at: Mapped[int] = mapped_column(BigInteger, default=0)
    # Bumped on every change we ask the provider for, so idempotency keys differ per operation.
    version: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[int] = mapped_column(BigInteger, default=now, onupdate=now)


class UsageRecord(Base):
    __tablename__ = "usage_records"
    __table_args__ = (
        UniqueConstraint("owner", "metric", "source_id"),
        Index("ix_usage_records_owner_metric_occurred_at", "owner", "metric", "occurred_at"),
    )
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    owner: Mapped[str] = mapped_column(String(64))
    metric: Mapped[str] = mapped_column(String(20))
    amount: Mapped[int] = mapped_column(BigInteger)
    source_id: Mapped[str] = mapped_column(String(100))  # audit id, AI call id: the natural dedupe key
    detail: Mapped[str] = mapped_column(String(200), default="")
    user_id: Mapped[str] = mapped_column(String(32), default="")
    occurred_at: Mapped[int] = mapped_column(BigInteger, default=now)


class PaymentEvent(Base):
    """Provider events applied, by their id: a redelivery is a no-op."""

    __tablename__ = "payment_events"
    id: Mapped[str] = mapped_column(String(255), primary_key=True)
    type: Mapped[str] = mapped_column(String(100))
    created: Mapped[int] = mapped_column(BigInteger, default=0)
    received_at: Mapped[int] = mapped_column(BigInteger, default=now)
    applied: Mapped[bool] = mapped_column(Boolean, default=False)


class RateCounter(Base):
    """Fixed-window request counters shared by every gateway replica (UNLOGGED: losing them
    in a crash only forgives one window)."""

    __tablename__ = "rate_counters"
    __table_args__ = ({"prefixes": ["UNLOGGED"]},)
    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    window: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)
