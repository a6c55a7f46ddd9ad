"""The alert rules shipped with the manifests (platform/monitoring/alerts.yaml), checked offline:
the signals that matter each have an alert, and every metric and label an expression names is
one the services really export (a renamed metric would otherwise leave an alert that never fires)."""

from __future__ import annotations

import re
from typing import Any

from prometheus_client import REGISTRY

import services.kit.metrics
import services.kit.supervision
from tests.deploy.conftest import by_name, rendered

assert services.kit.metrics  # imported for the metrics they register
assert services.kit.supervision

# signal -> the metric its alert must watch
SIGNALS = {
    "outbox relay lag": "cr_outbox_lag_seconds",
    "consumer pending": "cr_consumer_pending",
    "job age": "cr_job_oldest_age_seconds",
    "5xx rate": "cr_http_requests_total",
}
_METRIC = re.compile(r"\bcr_[a-z_]+\b")
_BY = re.compile(r"\bby\s*\(([^)]*)\)")
_MATCHERS = re.compile(r"\{([^}]*)\}")


def exported() -> dict[str, set[str]]:
    """Every sample name the services register, with its labels."""
    out: dict[str, set[str]] = {}
    for family in REGISTRY.collect():
        if not family.name.startswith("cr_"):
            continue
        labels = set(getattr(REGISTRY._names_to_collectors.get(family.name), "_labelnames", ()))
        for suffix in ("", "_total", "_sum", "_count", "_bucket", "_created"):
            out[family.name + suffix] = labels
    return out


def rules() -> list[dict[str, Any]]:
    (rule,) = by_name(rendered("platform/monitoring"), "PrometheusRule").values()
    return [r for group in rule["spec"]["groups"] for r in group["rules"]]


def test_each_signal_that_matters_has_an_alert() -> None:
    watched = {m for r in rules() for m in _METRIC.findall(r["expr"])}
    missing = {signal: metric for signal, metric in SIGNALS.items() if metric not in watched}
    assert not missing


def test_every_alert_names_exported_metrics_and_their_labels() -> None:
    metrics = exported()
    for rule in rules():
        expr = rule["expr"]
        names = _METRIC.findall(expr)
        assert names, rule["alert"]
        unknown = [n for n in names if n not in metrics]
        assert not unknown, f"{rule['alert']}: {unknown} are not exported"
        labels = set().union(*(metrics[n] for n in names))
        grouped = {label.strip() for group in _BY.findall(expr) for label in group.split(",") if label.strip()}
        matched = {m.split("=")[0].strip().rstrip("!~") for group in _MATCHERS.findall(expr) for m in group.split(",")}
        assert grouped | matched <= labels, f"{rule['alert']}: labels {sorted((grouped | matched) - labels)}"
        assert expr.count("(") == expr.count(")"), rule["alert"]


def test_every_alert_is_ready_to_route() -> None:
    names = [r["alert"] for r in rules()]
    assert len(names) == len(set(names))
    for rule in rules():
        assert re.fullmatch(r"CodeReview[A-Z][A-Za-z]+", rule["alert"])
        assert re.fullmatch(r"\d+m", rule["for"])
        assert rule["labels"]["severity"] in ("warning", "critical")
        assert rule["annotations"]["summary"]
        assert rule["annotations"]["description"]
