"""Both overlays render offline and every object they hold validates against the Kubernetes
schemas (kubernetes-validate's bundled copies, no network); the platform's custom resources are
rendered too but kept out of the schema check, because no offline schema exists for them."""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest

from tests.deploy.conftest import OVERLAYS, PLATFORM, rendered

# The oldest Kubernetes the manifests target (gRPC probes are GA from 1.27; autoscaling/v2 and
# policy/v1 are older) and the newest schema the pinned kubernetes-validate ships.
VERSIONS = ("1.29.0", kubernetes_validate.utils.latest_version())

# Operators' CRDs: CloudNativePG's Cluster, the Prometheus operator's ServiceMonitor, PodMonitor and
# PrometheusRule. kubernetes-validate knows only built-in kinds, so these are checked by the tests
# below instead (the alert rules by tests/deploy/test_alerts.py).
CRD_KINDS = {
    ("postgresql.cnpg.io/v1", "Cluster"),
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PodMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
}


def _validate(doc: dict[str, Any], version: str) -> None:
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        raise AssertionError(f"{doc['kind']}/{doc['metadata']['name']} on {version}: {exc.message}") from None


@pytest.mark.parametrize("name", OVERLAYS)
@pytest.mark.parametrize("version", VERSIONS)
def test_every_object_of_an_overlay_validates(name: str, version: str) -> None:
    docs = rendered(f"overlays/{name}")
    kinds = {d["kind"] for d in docs}
    assert {"Deployment", "Service", "Ingress", "NetworkPolicy", "ConfigMap"} <= kinds
    for doc in docs:
        assert (doc["apiVersion"], doc["kind"]) not in CRD_KINDS, "custom resources belong in platform/"
        _validate(doc, version)


@pytest.mark.parametrize("path", PLATFORM)
def test_platform_renders_and_holds_only_the_known_custom_resources(path: str) -> None:
    docs = rendered(path)
    assert docs
    for doc in docs:
        assert (doc["apiVersion"], doc["kind"]) in CRD_KINDS, doc["kind"]
        assert doc["metadata"]["name"]
        with pytest.raises(kubernetes_validate.SchemaNotFoundError):
            kubernetes_validate.validate(doc, VERSIONS[-1], strict=True)
