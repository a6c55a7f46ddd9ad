"""The system under test, reached the way a user reaches it.

``RestEngine`` (the default) starts the five services as processes (as ``bench.latency`` does),
commits a corpus's training files to a fresh git repository, registers it by path, indexes it,
waits until the analyzer has learned it, then sends each file under review with its content to
``POST /analyze`` and each added module to ``POST /analyze_pr``; the repository is deleted
afterwards. ``LocalEngine`` calls the same public entry points in this process instead (the
indexer's extraction ``services.source.extract`` + ``resolve_imports``, the engine's ``learn``,
``check``/``check_change`` with a pull request's default preferences, learning with the indexer's
domains and the declared configuration files as ``learn_and_store`` does): faster, but without
the services' own plumbing (storage, events, caches).

Both answer findings in the REST shape, reduced to what scoring needs.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(slots=True)
class F:
    rule: str
    category: str
    level: str
    start_line: int
    end_line: int
    fingerprint: str
    message: str
    suggestion: str
    share: float
    count: int
    path: str

    @classmethod
    def of(cls, doc: dict[str, Any]) -> F:
        ev = doc.get("evidence") or {}
        return cls(
            doc["rule"],
            doc.get("category", ""),
            ev.get("level", "strict"),
            int(doc.get("start_line", 0)),
            int(doc.get("end_line", 0)),
            doc.get("fingerprint", ""),
            doc.get("message", ""),
            doc.get("suggestion", "") or "",
            float(ev.get("share", 1.0) or 0.0),
            int(ev.get("count", 0) or 0),
            doc.get("path", ""),
        )


def added_patch(text: str) -> str:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{x}\n" for x in lines)


def learn_as_analyzer(
    files: dict[str, Any],
    *,
    configs: dict[str, bytes] | None = None,
    cochange: list[Any] | None = None,
    cochange_commits: int = 0,
    repository: str = "",
    commit: str = "",
    thresholds: Any = None,
) -> Any:
    """What ``services.analyzer.model_store.learn_and_store`` does with what the indexer serves,
    in this process: facts (``path -> FileFacts`` as extracted) with imports resolved, the
    indexer's domains (``analyze_structure``), co-change pairs and the number of commits they were
    counted over, and the tool configuration files when this engine reads them."""
    import inspect

    import msgspec

    from services.analyzer.engine import learn
    from services.analyzer.model_store import domain_map
    from services.indexer.structure import analyze_structure
    from services.source.imports import resolve_imports

    parsed = resolve_imports([f for _, f in sorted(files.items()) if f is not None and not f.skipped])
    domains = domain_map({"domains": msgspec.to_builtins(analyze_structure(parsed).domains)}, [f.path for f in parsed])
    extra: dict[str, Any] = {}
    if configs and "tool_configs" in inspect.signature(learn).parameters:
        from services.analyzer.engine import toolconfig  # type: ignore[attr-defined]

        texts = {p: d.decode("utf-8", "replace") for p, d in sorted(configs.items())}
        extra["tool_configs"] = toolconfig.read(texts)
    return learn(
        parsed,
        cochange_pairs=[(c.source, c.target, c.support, c.confidence) for c in cochange or ()],
        cochange_commits=cochange_commits,
        domains=domains,
        repository=repository,
        commit=commit,
        thresholds=thresholds,
        **extra,
    )


class LocalEngine:
    label = "in-process: services.source extract, learn as the analyzer does, engine check (review defaults)"

    def __init__(self, strict_shift: float = 0.0, lift_held: bool = False) -> None:
        """``strict_shift`` moves every strict bar's share by that much (``bench.quality.loo``:
        thresholds chosen on the other repositories); 0 is the engine's own thresholds.
        ``lift_held`` scores the rules held loose (``engine/earned.py``) at the level their evidence
        earns, as a repository raising them in ``.codereview.yml`` would (``bench.replay --lift-held``)."""
        from services.analyzer.engine import CheckPrefs

        self.prefs = CheckPrefs(level="strict")
        self._facts: dict[tuple[str, str], Any] = {}
        self.thresholds = _shifted(strict_shift, lift_held) if strict_shift or lift_held else None
        if strict_shift:
            self.label += f", every strict share bar {strict_shift:+.2f}"
        if lift_held:
            self.label += ", rules held loose lifted"
        self.held = () if lift_held else held_rules()

    def _extract(self, path: str, data: bytes) -> Any:
        from services.source.extract import extract

        key = (path, hashlib.sha1(data).hexdigest())
        hit = self._facts.get(key)
        if hit is None:
            hit = self._facts[key] = extract(path, data)
        return hit

    def learn(self, name: str, files: dict[str, bytes]) -> Any:
        from bench.repos import is_config, read_as_config

        facts = {p: self._extract(p, d) for p, d in files.items() if not is_config(p)}
        configs = {p: d for p, d in files.items() if read_as_config(p)}
        return learn_as_analyzer(facts, configs=configs, repository=name, thresholds=self.thresholds)

    def analyze(self, model: Any, path: str, data: bytes) -> list[F]:
        from services.analyzer.engine import check
        from services.analyzer.review import text_of
        from services.source.extract import extract

        facts = extract(path, data)
        if facts.skipped:
            return []
        return [_local(f) for f in check(facts, text_of(data), model, prefs=self.prefs)]

    def added(self, model: Any, files: dict[str, bytes]) -> list[F]:
        """Change-level findings of a pull request adding ``files``."""
        from services.analyzer.engine import check_change

        return [_local(f) for f in check_change(list(files), list(files), model, prefs=self.prefs)]

    def forget(self, model: Any) -> None:
        pass

    def close(self) -> None:
        pass


def held_rules() -> tuple[str, ...]:
    """The rules the engine holds at the loose level whatever their evidence (``engine/earned.py``):
    the benchmark scores the strict level only, so their plants are misses by that decision."""
    from services.analyzer.engine.earned import HELD_LOOSE

    return tuple(sorted(HELD_LOOSE))


def _shifted(shift: float, lift_held: bool = False) -> Any:
    """The engine's default thresholds with every strict share moved by ``shift`` (within 0..1;
    a bar above 1, a rule kept loose on purpose, stays so); the held rules stay held unless
    ``lift_held``."""
    import msgspec

    from services.analyzer.engine.thresholds import DEFAULT_THRESHOLDS, Thresholds

    bars = {}
    for rule, bar in DEFAULT_THRESHOLDS.bars.items():
        share = bar.strict.min_share
        moved = share if share > 1.0 or share <= 0.0 else min(1.0, max(0.0, share + shift))
        bars[rule] = msgspec.structs.replace(bar, strict=msgspec.structs.replace(bar.strict, min_share=moved))
    return Thresholds(bars) if lift_held else Thresholds(bars, DEFAULT_THRESHOLDS.held)


def _local(f: Any) -> F:
    ev = f.evidence
    return F(
        f.rule,
        f.family,
        f.level,
        f.start_line,
        f.end_line,
        f.fingerprint,
        f.message,
        f.suggestion or "",
        ev.share if ev else 1.0,
        ev.count if ev else 0,
        f.path,
    )


class RestEngine:
    label = "REST API of a running stack (register by path, index_repo, analyze with content, analyze_pr)"

    def __init__(self) -> None:
        from bench.latency.__main__ import Api, Stack, create_token, start_system

        self.held = held_rules()
        self.stack = Stack()
        self.work = Path(tempfile.mkdtemp(prefix="cr-bench-quality-"))
        self.stack.push("remove work dir", lambda: shutil.rmtree(self.work, ignore_errors=True))
        try:
            self.system = start_system(self.stack, self.work, plans_env_unlimited())
            self.api = Api(self.system.url, create_token(self.system))
        except BaseException:
            self.stack.close()
            raise
        self.stack.push("close client", self.api.http.close)
        self.count = 0

    def learn(self, name: str, files: dict[str, bytes]) -> str:
        from bench.latency.__main__ import wait_learned

        self.count += 1
        repo = self.work / "repos" / f"r{self.count}-{name.replace('/', '+').replace(' ', '_')}"
        for path, data in files.items():
            dest = repo / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        env = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost", "GIT_COMMITTER_NAME": "bench"}
        env |= {"GIT_COMMITTER_EMAIL": "bench@localhost", "PATH": "/usr/bin:/bin:/usr/local/bin"}
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--no-gpg-sign", "-m", "training files"]):
            subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
        repo_id = self.api.call("POST", "/v1/repositories", json={"path": str(repo)})[1].json()["id"]
        self.api.call("POST", f"/v1/repositories/{repo_id}/index_repo")
        wait_learned(self.api, repo_id, head.stdout.strip(), timeout=900)
        return str(repo_id)

    def _findings(self, reply: Any) -> list[F]:
        return [F.of(doc) for doc in reply.json()["findings"]]

    def analyze(self, repo_id: str, path: str, data: bytes) -> list[F]:
        text = data.decode("utf-8-sig", "replace")
        reply = self.api.http.post(f"/v1/repositories/{repo_id}/analyze", json={"path": path, "content": text})
        if reply.status_code == 422:  # not a supported file (an injection the service cannot parse)
            return []
        if reply.status_code >= 400:
            raise RuntimeError(f"analyze {path}: {reply.status_code} {reply.text[:300]}")
        return self._findings(reply)

    def added(self, repo_id: str, files: dict[str, bytes]) -> list[F]:
        body = {
            "files": [
                {
                    "path": p,
                    "status": "added",
                    "patch": added_patch(d.decode("utf-8", "replace")),
                    "content": d.decode(),
                }
                for p, d in files.items()
            ]
        }
        reply = self.api.call("POST", f"/v1/repositories/{repo_id}/analyze_pr", json=body)[1]
        return [f for f in self._findings(reply) if f.start_line == 0]

    def forget(self, repo_id: str) -> None:
        reply = self.api.http.delete(f"/v1/repositories/{repo_id}")
        if reply.status_code >= 400:
            print(f"delete {repo_id}: {reply.status_code} {reply.text[:200]}", file=sys.stderr)

    def close(self) -> None:
        self.stack.close()


def plans_env_unlimited() -> str:
    """The free plan without caps or rate limit: the benchmark registers dozens of repositories
    and sends thousands of analyses (every request is still metered)."""
    from services.billing.plans import FREE_PLAN, HOSTED_PLANS

    plans = []
    for plan in HOSTED_PLANS:
        doc = plan.model_dump()
        if plan.id == FREE_PLAN:
            doc["caps"] = {k: -1 for k in doc["caps"]}
            doc["rate_limit_per_minute"] = doc["org_rate_limit_per_minute"] = 0
        plans.append(doc)
    return json.dumps(plans)
