"""Learning a repository's conventions when it is indexed, and keeping the model in memory.

``repository.indexed`` -> stream the snapshot's facts from the indexer, add its co-change pairs,
domains and ``.codereview.yml``, learn with the engine, store the model per repository and
commit, then replace the replica's in-memory entry once the transaction has committed. A
request for a repository that is indexed but not learned yet (the event still in flight, or
lost) learns on demand under the same per-repository lock.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession

from services.analyzer import loading, model_warmup, queries, snapshot_facts
from services.analyzer.deps import Deps
from services.analyzer.engine import (
    CONFIG_FILE,
    ConfigError,
    ConventionModel,
    RepoConfig,
    encode_model,
    learn,
    toolconfig,
)
from services.analyzer.engine.conventions import MODEL_SCHEMA_VERSION
from services.analyzer.models import inbox, now_ms
from services.analyzer.state import LoadedRepo
from services.contracts.v1 import events_pb2, indexer_pb2
from services.kit.bus import SUBJECT_REPOSITORY_DELETED, SUBJECT_REPOSITORY_INDEXED, SUBJECT_SUBSCRIPTION_CHANGED
from services.kit.errors import ServiceError
from services.kit.inbox import EventConsumer, PermanentError
from services.kit.runtime import ServiceRuntime
from services.source.facts import FileFacts, decode
from services.source.paths import is_tool_config

log = logging.getLogger(__name__)

LEARN_CONSUMER = "analyzer-learn"
DELETED_CONSUMER = "analyzer-repository-deleted"


async def _optional(what: str, coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        return await coro
    except ServiceError as exc:
        if exc.transient:  # try the event again later; anything else degrades the model
            raise
        log.info("learning without %s: %s (%s)", what, exc.message, exc.code)
        return None


# Tool configuration files read per learning run (the nearest wins per directory, so the
# shallowest ones matter most); a monorepo with hundreds of package.json files is capped.
MAX_TOOL_CONFIGS = 64


def tool_config_paths(facts: list[FileFacts]) -> tuple[list[str], list[str]]:
    """Paths of the tools' configuration files in the snapshot, and notes on those not read."""
    wanted: list[str] = []
    notes: list[str] = []
    for f in facts:
        name = f.path.rsplit("/", 1)[-1]
        if f.skipped in ("vendored", "binary", "oversized"):
            continue
        if is_tool_config(f.path):
            wanted.append(f.path)
        elif name in toolconfig.JS_MODULE_CONFIGS:
            notes.append(f"{f.path}: not read (a JavaScript module; only JSON/YAML configurations are parsed)")
    wanted.sort(key=lambda p: (p.count("/"), p))
    if len(wanted) > MAX_TOOL_CONFIGS:
        notes.append(f"{len(wanted) - MAX_TOOL_CONFIGS} more configuration files not read (deepest first)")
    return wanted[:MAX_TOOL_CONFIGS], sorted(notes)


async def _tool_config_texts(deps: Deps, repo_id: str, commit: str, paths: list[str]) -> dict[str, str]:
    texts = await asyncio.gather(*(_file_text(deps, repo_id, path, commit) for path in paths))
    return {path: text for path, text in zip(paths, texts, strict=True) if text is not None}


async def _file_text(deps: Deps, repo_id: str, path: str, commit: str) -> str | None:
    try:
        reply = await deps.indexer.file(repo_id, path, commit)
    except ServiceError as exc:
        if exc.transient:
            raise
        return None
    return reply.content.decode("utf-8", "replace") if reply.content else None


async def _config_text(deps: Deps, repo_id: str, commit: str) -> str | None:
    return await _file_text(deps, repo_id, CONFIG_FILE, commit)


def domain_map(document: Any, paths: list[str]) -> dict[str, str] | None:
    """path -> domain from the indexer's domains document (longest ``path_prefix`` wins)."""
    items = document.get("domains") if isinstance(document, dict) else None
    if not isinstance(items, list) or not items:
        return None
    prefixes = sorted(
        ((str(d.get("path_prefix", "")), str(d.get("name", ""))) for d in items if isinstance(d, dict)),
        key=lambda p: -len(p[0]),
    )
    out: dict[str, str] = {}
    for path in paths:
        for prefix, name in prefixes:
            if path.startswith(prefix):
                out[path] = name
                break
    return out


def summarize(
    facts: list[FileFacts],
    model: ConventionModel,
    *,
    domains: Any,
    history: Any,
    config: dict[str, Any],
    timings: dict[str, float],
) -> dict[str, Any]:
    """What global_context, the dashboard and the fleet view read without decoding the model."""
    parsed = [f for f in facts if not f.skipped]
    languages: dict[str, list[int]] = {}
    for f in parsed:
        stats = languages.setdefault(f.language or "other", [0, 0])
        stats[0] += 1
        stats[1] += f.lines
    by_family: dict[str, Counter[str]] = {}
    for conv in model.conventions:
        by_family.setdefault(conv.family, Counter())[conv.level] += 1
    levels = Counter(c.level for c in model.conventions)
    history = history if isinstance(history, dict) else {}
    return {
        "commit": model.commit,
        "files": len(parsed),
        "lines": sum(f.lines for f in parsed),
        "test_files": sum(1 for f in parsed if f.is_test),
        "skipped": dict(Counter(f.skipped for f in facts if f.skipped)),
        "languages": [
            {"language": lang, "files": n, "lines": lines}
            for lang, (n, lines) in sorted(languages.items(), key=lambda kv: (-kv[1][0], kv[0]))
        ],
        "conventions": {
            "total": len(model.conventions),
            "strict": levels.get("strict", 0),
            "loose": levels.get("loose", 0),
            "by_family": {fam: dict(c) for fam, c in sorted(by_family.items())},
        },
        # Repository-wide enforced choices: what the fleet view compares across repositories.
        "enforced": [
            {"rule": c.rule, "family": c.family, "language": c.language, "choice": c.choice, "share": c.share}
            for c in model.conventions
            if c.level == "strict" and c.scope.kind in ("language", "repository") and c.source != "reports"
        ],
        "domains": (domains or {}).get("domains", [])[:100] if isinstance(domains, dict) else [],
        "hot_spots": list(history.get("hot_spots", []))[:20],
        "history": {k: history[k] for k in ("commits", "authors", "first_commit_at", "last_commit_at") if k in history},
        "config": config,
        "timings_ms": timings,
    }


async def learn_and_store(
    deps: Deps, session: AsyncSession, repo_id: str, commit: str, *, owner: str, full_name: str
) -> LoadedRepo:
    """Learn ``repo_id`` at ``commit`` (``""``: the last successful index) and store the model.

    Runs in the caller's transaction, writing only at the end so the slow part (streaming facts,
    learning) holds no row lock; the caller puts the returned entry in the cache after commit.
    """
    started = time.perf_counter()
    timeout = deps.settings.learn_timeout_seconds
    try:
        answered, blobs = await deps.indexer.facts(repo_id, commit, timeout=timeout)
    except ServiceError as exc:
        if exc.code != "repo_not_indexed" or not commit:
            raise
        # Indexed again since the event was sent: learn the current snapshot (its own event will
        # then find the model already there).
        answered, blobs = await deps.indexer.facts(repo_id, "", timeout=timeout)
    fetched = time.perf_counter()
    # Taken out while this run works: a run that fails leaves no state, and the next decodes all.
    previous = deps.facts.take(repo_id)
    state, delta = await asyncio.to_thread(snapshot_facts.update, previous, repo_id, answered, blobs)
    del blobs
    facts = state.facts
    decoded = time.perf_counter()
    paths, notes = tool_config_paths(facts)
    pairs, domains_doc, history_doc, config_text, tool_texts = await asyncio.gather(
        _optional("co-changes", deps.indexer.co_changes(repo_id)),
        _optional("domains", deps.indexer.document("GetDomains", repo_id)),
        _optional("history", deps.indexer.document("GetHistory", repo_id)),
        _config_text(deps, repo_id, answered),
        _tool_config_texts(deps, repo_id, answered, paths),
    )
    config: RepoConfig | None = None
    config_info: dict[str, Any] = {"file": CONFIG_FILE, "present": config_text is not None, "errors": []}
    if config_text is not None:
        from services.analyzer.engine import parse_config

        try:
            config = parse_config(config_text)
        except ConfigError as exc:
            # A broken config must not stop reviews: learn without it and say why on global_context.
            config_info["errors"] = exc.errors
    # What the tools are configured to enforce: files the repository's .codereview.yml ignores do not count.
    tool_configs = toolconfig.read({p: t for p, t in tool_texts.items() if config is None or not config.is_ignored(p)})
    config_info["declared"] = {"files": tool_configs.files, "notes": notes + tool_configs.notes}
    domains = domain_map(domains_doc, [f.path for f in facts])
    gathered = time.perf_counter()
    model = await asyncio.to_thread(
        learn,
        facts,
        cochange_pairs=pairs or (),
        cochange_commits=_cochange_commits(history_doc),
        domains=domains,
        config=config,
        tool_configs=tool_configs,
        repository=repo_id,
        commit=answered,
        memo=state.learned,
    )
    learned = time.perf_counter()
    deps.facts.put(state)
    timings = {
        "facts": round((fetched - started) * 1000, 1),
        "decode": round((decoded - fetched) * 1000, 1),
        "inputs": round((gathered - decoded) * 1000, 1),
        "learn": round((learned - gathered) * 1000, 1),
    }
    summary = summarize(facts, model, domains=domains_doc, history=history_doc, config=config_info, timings=timings)
    summary["facts_delta"] = delta.as_dict()  # how much of the snapshot this run decoded
    summary["learn_delta"] = state.learned.last.as_dict()  # and how much the learners observed again
    # The files the warm-up checks, so that replicas which load this model check the same ones.
    summary["warm_paths"] = [f.path for f in model_warmup.samples(facts)]
    payload = await asyncio.to_thread(encode_model, model)
    await queries.upsert_repository(session, repo_id, owner=owner, full_name=full_name, head_sha=answered)
    model_id = await queries.save_model(
        session,
        {
            "id": _new_id(),
            "repository_id": repo_id,
            "commit": answered,
            "created_at": now_ms(),
            "files": summary["files"],
            "conventions": len(model.conventions),
            "enforced": summary["conventions"]["strict"],
            "learn_ms": timings["learn"],
            "schema": MODEL_SCHEMA_VERSION,
            "model": payload,
            "summary": summary,
        },
    )
    await queries.set_model(session, repo_id, model_id, answered, now_ms())
    row = await queries.repository_by_ref(session, repo_id)
    assert row is not None  # upserted above in this transaction
    entry = await loading.entry_for(session, row, model, summary)
    loaded = time.perf_counter()
    await _prepare(deps, entry, answered, facts)
    spent = timings | {"prepare": round((time.perf_counter() - loaded) * 1000, 1)}
    log.info(
        "learned %s at %s: %d files (%s; %s), %d conventions; ms %s",
        repo_id,
        answered[:12],
        len(facts),
        ", ".join(f"{n} {k}" for k, n in delta.as_dict().items()),
        ", ".join(f"{n} {k}" for k, n in state.learned.last.as_dict().items()),
        len(model.conventions),
        " ".join(f"{k}={v}" for k, v in spent.items()),
    )
    return entry


async def _prepare(deps: Deps, entry: LoadedRepo, commit: str, facts: list[FileFacts]) -> None:
    """Build the new model's lookup tables now, before it serves its first request."""
    if entry.model is None:
        return
    sampled = model_warmup.samples(facts)
    replies = await asyncio.gather(*(_warm_file(deps, entry.id, f.path, commit) for f in sampled))
    files = [(f, r.content.decode("utf-8", "replace")) for f, r in zip(sampled, replies, strict=True) if r is not None]
    await asyncio.to_thread(model_warmup.prepare, entry.model, files)


async def prepare_loaded(deps: Deps, entry: LoadedRepo) -> None:
    """The same for a model another replica learned: its warm-up files as the indexer has them."""
    if entry.model is None:
        return
    replies = await asyncio.gather(
        *(_warm_file(deps, entry.id, path, entry.commit) for path in entry.summary.get("warm_paths", []))
    )
    files = [(decode(r.facts), r.content.decode("utf-8", "replace")) for r in replies if r is not None and r.facts]
    await asyncio.to_thread(model_warmup.prepare, entry.model, files)


async def _warm_file(deps: Deps, repo_id: str, path: str, commit: str) -> indexer_pb2.FileContent | None:
    """A warm-up file, or None: without it the warm-up does less, and nothing fails for it (the
    snapshot indexed again since, the indexer briefly away)."""
    try:
        return await deps.indexer.file(repo_id, path, commit)
    except ServiceError as exc:
        log.info("warming up %s without %s: %s", repo_id, path, exc.code)
        return None


def _new_id() -> str:
    from services.analyzer.models import new_id

    return new_id()


def after_commit(session: AsyncSession, action: Callable[[], None]) -> None:
    """Run ``action`` once the session's transaction has committed (never on rollback)."""
    event.listen(session.sync_session, "after_commit", lambda _s: action(), once=True)


async def on_indexed(deps: Deps, session: AsyncSession, env: events_pb2.EventEnvelope) -> None:
    msg = events_pb2.RepositoryIndexed.FromString(env.payload)
    if not msg.repository_id or not msg.head_sha:
        raise PermanentError("repository.indexed without repository id or head")
    # Known at once (committed apart from the learning run): a request arriving meanwhile finds
    # the repository, its owner and head here and waits for this run rather than asking the indexer.
    async with deps.db.session() as early:
        await queries.upsert_repository(
            early, msg.repository_id, owner=msg.owner, full_name=msg.full_name, head_sha=msg.head_sha
        )
    async with deps.cache.lock(msg.repository_id):
        existing = await queries.model_id_for_commit(session, msg.repository_id, msg.head_sha)
        stored = await queries.model_row(session, existing) if existing else None
        if stored is not None and stored.schema == MODEL_SCHEMA_VERSION:
            # The same commit indexed again (an incremental run with nothing new): point at its model.
            await queries.upsert_repository(
                session, msg.repository_id, owner=msg.owner, full_name=msg.full_name, head_sha=msg.head_sha
            )
            await queries.set_model(session, msg.repository_id, stored.id, stored.commit, now_ms())
            row = await queries.repository_by_ref(session, msg.repository_id)
            assert row is not None
            entry = await loading.entry_for(session, row)
            if entry.model is not None:
                await asyncio.to_thread(model_warmup.prepare, entry.model, [])
        else:
            entry = await learn_and_store(
                deps, session, msg.repository_id, msg.head_sha, owner=msg.owner, full_name=msg.full_name
            )
        # In memory before the lock is released, so requests waiting on it find the new model; if
        # the commit then fails, the model is still a correct one and the event is redelivered.
        deps.cache.put(entry)


async def on_deleted(deps: Deps, session: AsyncSession, env: events_pb2.EventEnvelope) -> None:
    msg = events_pb2.RepositoryDeleted.FromString(env.payload)
    await queries.delete_repository(session, msg.repository_id)
    deps.facts.drop(msg.repository_id)
    after_commit(session, partial(deps.cache.drop, msg.repository_id))


async def start_consumers(runtime: ServiceRuntime, deps: Deps) -> None:
    specs = (
        # One event at a time: a learning run may take minutes (the consumer heartbeats it, so a
        # short ack wait only bounds how soon a crashed replica's event goes to another), and
        # events fetched in a batch would wait their turn while their own ack wait runs out.
        (LEARN_CONSUMER, SUBJECT_REPOSITORY_INDEXED, on_indexed, deps.settings.event_ack_wait_seconds),
        (DELETED_CONSUMER, SUBJECT_REPOSITORY_DELETED, on_deleted, deps.settings.event_ack_wait_seconds),
    )
    if deps.quota is not None:
        # A core NATS subscription, made once on the connected bus (the client renews it after
        # a reconnect).
        await runtime.bus.watch(SUBJECT_SUBSCRIPTION_CHANGED, deps.quota.on_subscription_changed)
    for durable, subject, handler, ack_wait in specs:
        consumer = EventConsumer(
            runtime.bus, runtime.db, inbox, durable, subject, service="analyzer", ack_wait=ack_wait, batch=1
        )
        runtime.supervise(durable, partial(consumer.consume, partial(handler, deps)), stop=consumer.stop)


def _cochange_commits(history_doc: dict[str, Any] | None) -> int:
    """The commits co-change pairs were counted over: the history's, less those too large to count."""
    if not history_doc:
        return 0
    return max(0, int(history_doc.get("commits", 0)) - int(history_doc.get("huge_commits", 0)))
