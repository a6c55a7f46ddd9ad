"""The hostapp service's database."""

from __future__ import annotations

from services.kit.db import make_base
from services.kit.inbox import define_inbox
from services.kit.outbox import define_outbox

Base = make_base()
outbox = define_outbox(Base.metadata)
inbox = define_inbox(Base.metadata)
