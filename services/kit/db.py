"""Database engine and the unit-of-work session scope shared by all services.

One engine per process, built at start-up; one session per RPC or consumed message;
commit or rollback happens here and nowhere else.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from sqlalchemy import MetaData, make_url, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

# Stable constraint names so Alembic migrations stay diffable.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def new_id() -> str:
    """Primary keys of every service: opaque, unguessable, 32 hex characters."""
    return uuid.uuid4().hex


def now_ms() -> int:
    return int(time.time() * 1000)


def now_s() -> int:
    return int(time.time())


def service_metadata() -> MetaData:
    """The metadata of one service's declarative base (one per service database):
    ``class Base(DeclarativeBase): metadata = service_metadata()``."""
    return MetaData(naming_convention=NAMING_CONVENTION)


# A held connection's connect: a host that does not answer fails the statement well within the
# deadlines of the callers (the code host's 10 s for a delivery).
HELD_CONNECT_TIMEOUT_SECONDS = 3


class Database:
    def __init__(self, url: str, *, pool_size: int = 5) -> None:
        self.url = url
        self.engine: AsyncEngine = create_async_engine(url, pool_size=pool_size, max_overflow=10, pool_pre_ping=True)
        self.sessions = async_sessionmaker(self.engine, expire_on_commit=False)
        self._held: dict[str, psycopg.AsyncConnection[Any]] = {}
        self._holding = asyncio.Lock()

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A unit of work: commits on success, rolls back on any exception."""
        async with self.sessions() as session:
            try:
                yield session
                await session.commit()
            except BaseException:
                await session.rollback()
                raise

    @asynccontextmanager
    async def autocommit(self) -> AsyncIterator[AsyncConnection]:
        """A connection where each statement is its own transaction: no BEGIN/COMMIT round trips,
        for hot paths made of single statements that need no unit of work around them."""
        async with self.engine.connect() as conn:
            yield await conn.execution_options(isolation_level="AUTOCOMMIT")

    @asynccontextmanager
    async def read_session(self) -> AsyncIterator[AsyncSession]:
        """A session for reads on the hot path: each statement on its own (autocommit), so no
        BEGIN/COMMIT round trips. Its statements do not share a snapshot; use ``session()`` when
        they must, and never write through it."""
        async with self.autocommit() as conn, AsyncSession(bind=conn, expire_on_commit=False) as session:
            yield session

    @asynccontextmanager
    async def snapshot_session(self) -> AsyncIterator[AsyncSession]:
        """Reads that must agree with each other while a writer may replace what they read (a
        repository's current snapshot id, then the snapshot's rows): one read-only REPEATABLE READ
        transaction, so every statement sees the database as of its first one."""
        async with self.engine.connect() as raw:
            conn = await raw.execution_options(isolation_level="REPEATABLE READ", postgresql_readonly=True)
            async with conn.begin(), AsyncSession(bind=conn, expire_on_commit=False) as session:
                yield session

    async def ping(self) -> bool:
        try:
            async with self.engine.connect() as conn:
                await conn.execute(text("select 1"))
            return True
        except Exception:
            return False

    async def held(self, name: str) -> psycopg.AsyncConnection[Any]:
        """The driver connection kept open for ``name`` (autocommit), outside the pool, for a hot
        path whose statements run one at a time: a checkout of the pool costs a round trip (its
        pre-ping) before every statement. A closed or broken one is replaced; the caller runs a
        statement again on the new one only if it may (it cannot tell whether a statement that
        lost its connection committed)."""
        async with self._holding:
            conn = self._held.get(name)
            if conn is None or conn.closed or conn.broken:
                dsn = make_url(self.url).set(drivername="postgresql").render_as_string(hide_password=False)
                conn = self._held[name] = await psycopg.AsyncConnection.connect(
                    dsn, autocommit=True, connect_timeout=HELD_CONNECT_TIMEOUT_SECONDS
                )
            return conn

    async def dispose(self) -> None:
        held, self._held = list(self._held.values()), {}
        for conn in held:
            await conn.close()
        await self.engine.dispose()


async def advisory_lock(session: AsyncSession, key: str) -> None:
    """Wait for the transaction-scoped advisory lock named ``key`` (released at commit/rollback)."""
    await session.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": key})


async def try_advisory_lock(session: AsyncSession, key: str) -> bool:
    """Take the transaction-scoped advisory lock named ``key``, or False when another holds it."""
    return bool((await session.execute(text("SELECT pg_try_advisory_xact_lock(hashtext(:k))"), {"k": key})).scalar())
