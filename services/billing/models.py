"""Billing's database: users, organizations, memberships with roles, access tokens."""

from __future__ import annotations

import time
import uuid

from sqlalchemy import BigInteger, Boolean, ForeignKey, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from services.kit.db import make_base
from services.kit.inbox import define_inbox
from services.kit.outbox import define_outbox

Base = make_base()
outbox = define_outbox(Base.metadata)
inbox = define_inbox(Base.metadata)


def new_id() -> str:
    return uuid.uuid4().hex


def now() -> int:
    return int(time.time())


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
    status: Mapped[str] = mapped_column(String(20), default="active")
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
