"""Properties of the rendered overlays: probes, limits, security context, selectors, the network
policies against who really calls whom in the code, settings that exist, and no secret values."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from services.analyzer.settings import AnalyzerSettings
from services.billing.settings import BillingSettings
from services.gateway.settings import GatewaySettings
from services.hostapp.settings import HostAppSettings
from services.indexer.settings import IndexerSettings
from services.kit.settings import BaseServiceSettings
from tests.deploy.conftest import K8S, ROOT, by_name, of_kind, rendered

GRPC = {"billing": 50051, "indexer": 50052, "analyzer": 50053, "hostapp": 50054}
COMPONENTS = ("gateway", *GRPC)
AUTOSCALED = {"gateway", "indexer", "analyzer", "hostapp"}
SETTINGS = {
    "gateway": GatewaySettings,
    "billing": BillingSettings,
    "indexer": IndexerSettings,
    "analyzer": AnalyzerSettings,
    "hostapp": HostAppSettings,
}
# Namespaces outside the application's that may open connections into it.
OUTSIDE = {"ingress-nginx": {"gateway"}, "monitoring": set(COMPONENTS), "cnpg-system": set()}

Doc = dict[str, Any]


def pod(deployment: Doc) -> Doc:
    return deployment["spec"]["template"]["spec"]


def all_containers(deployment: Doc) -> list[Doc]:
    return [*pod(deployment).get("initContainers", []), *pod(deployment)["containers"]]


def main_container(deployment: Doc) -> Doc:
    (container,) = [c for c in pod(deployment)["containers"] if c["name"] == deployment["metadata"]["name"]]
    return container


def component(labels: dict[str, str]) -> str | None:
    if labels.get("app.kubernetes.io/name") == "codereview":
        return labels.get("app.kubernetes.io/component")
    return None


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def test_one_deployment_service_and_disruption_budget_per_process(overlay: list[Doc]) -> None:
    deployments = by_name(overlay, "Deployment")
    assert set(deployments) == set(COMPONENTS)
    assert set(by_name(overlay, "Service")) == set(COMPONENTS)
    assert {d["spec"]["scaleTargetRef"]["name"] for d in of_kind(overlay, "HorizontalPodAutoscaler")} == AUTOSCALED
    budgets = of_kind(overlay, "PodDisruptionBudget")
    for name, deployment in deployments.items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert [b for b in budgets if matches(b["spec"]["selector"]["matchLabels"], labels)], name
        assert not any(s["spec"].get("type") in ("LoadBalancer", "NodePort") for s in of_kind(overlay, "Service"))


def test_selectors_match_the_pods_they_mean(overlay: list[Doc]) -> None:
    deployments = by_name(overlay, "Deployment")
    for name, deployment in deployments.items():
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert component(labels) == name
        assert matches(deployment["spec"]["selector"]["matchLabels"], labels)
        for spread in pod(deployment)["topologySpreadConstraints"]:
            assert spread["labelSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    for name, service in by_name(overlay, "Service").items():
        selected = [d for d in deployments.values() if matches(service["spec"]["selector"], pod_labels(d))]
        assert [d["metadata"]["name"] for d in selected] == [name]
        port_names = {p["name"] for p in main_container(selected[0])["ports"]}
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= port_names
    for hpa in of_kind(overlay, "HorizontalPodAutoscaler"):
        assert hpa["spec"]["scaleTargetRef"]["name"] in deployments
        assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]


def pod_labels(deployment: Doc) -> dict[str, str]:
    return deployment["spec"]["template"]["metadata"]["labels"]


def test_probes_on_the_health_endpoints(overlay: list[Doc]) -> None:
    for name, deployment in by_name(overlay, "Deployment").items():
        container = main_container(deployment)
        probes = {kind: container[kind] for kind in ("startupProbe", "readinessProbe", "livenessProbe")}
        if name == "gateway":
            assert probes["readinessProbe"]["httpGet"]["path"] == "/readyz"
            assert probes["livenessProbe"]["httpGet"]["path"] == "/healthz"
            assert probes["startupProbe"]["httpGet"]["path"] == "/healthz"
        else:
            # The standard gRPC health service, on the port the service really listens on.
            ports = {p["name"]: p["containerPort"] for p in container["ports"]}
            assert ports["grpc"] == GRPC[name]
            for probe in probes.values():
                assert probe["grpc"] == {"port": GRPC[name]}
        # Liveness gives a dependency outage time before it restarts anything.
        live = probes["livenessProbe"]
        assert live["periodSeconds"] * live["failureThreshold"] >= 30


def test_every_container_has_requests_and_limits(overlay: list[Doc]) -> None:
    for deployment in of_kind(overlay, "Deployment"):
        for container in all_containers(deployment):
            resources = container["resources"]
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(resources[kind]), (deployment["metadata"]["name"], container["name"])


def test_security_context_of_every_pod_and_container(overlay: list[Doc]) -> None:
    dockerfile_user = re.search(r"^USER (\d+):(\d+)$", (ROOT / "Dockerfile").read_text(), re.M)
    assert dockerfile_user
    for deployment in of_kind(overlay, "Deployment"):
        spec = pod(deployment)
        context = spec["securityContext"]
        assert context["runAsNonRoot"] is True
        assert (str(context["runAsUser"]), str(context["runAsGroup"])) == dockerfile_user.groups()
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}
        assert spec["automountServiceAccountToken"] is False
        tmp_volumes = {v["name"] for v in spec["volumes"] if "emptyDir" in v}
        for container in all_containers(deployment):
            sc = container["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False
            assert sc["readOnlyRootFilesystem"] is True
            assert sc["capabilities"]["drop"] == ["ALL"]
            assert "add" not in sc["capabilities"]
            assert sc.get("privileged", False) is False
            # A read-only root needs somewhere to write temporary files.
            assert any(m["mountPath"] == "/tmp" and m["name"] in tmp_volumes for m in container["volumeMounts"])


def test_commands_run_real_modules_and_migrations_precede_each_service(overlay: list[Doc]) -> None:
    images = set()
    for name, deployment in by_name(overlay, "Deployment").items():
        container = main_container(deployment)
        assert container["command"] == ["python", "-m", f"services.{name}.main"]
        assert (ROOT / "services" / name / "main.py").is_file()
        images |= {c["image"] for c in all_containers(deployment)}
        init = pod(deployment).get("initContainers", [])
        if name in GRPC:
            (migrate,) = init
            assert migrate["command"] == ["python", "-m", "services.kit.migrations", name]
            assert (ROOT / "services" / name / "migrations").is_dir()
            assert env_names(migrate) >= {f"CR_{name.upper()}_DATABASE_URL"}
        else:
            assert init == []
    (image,) = images
    assert re.fullmatch(r"[\w.\-/:]+:[\w.\-]+", image), image
    assert not image.endswith(":latest"), image


def env_names(container: Doc) -> set[str]:
    return {e["name"] for e in container.get("env", [])}


def test_the_indexer_keeps_its_mirrors_on_a_shared_volume(overlay: list[Doc]) -> None:
    indexer = by_name(overlay, "Deployment")["indexer"]
    config = configmap(overlay)
    (claim,) = [
        v["persistentVolumeClaim"]["claimName"] for v in pod(indexer)["volumes"] if "persistentVolumeClaim" in v
    ]
    pvc = by_name(overlay, "PersistentVolumeClaim")[claim]
    # Every replica serves GetFile from the mirrors, so all of them mount the same volume.
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"]
    (mount,) = [m for m in main_container(indexer)["volumeMounts"] if m["name"] != "tmp"]
    assert mount["mountPath"] == config["CR_DATA_DIR"] if "CR_DATA_DIR" in config else dockerfile_env("CR_DATA_DIR")


def dockerfile_env(name: str) -> str:
    found = re.search(rf"\b{name}=(\S+)", (ROOT / "Dockerfile").read_text())
    assert found
    return found.group(1)


def configmap(docs: list[Doc]) -> dict[str, str]:
    (config,) = of_kind(docs, "ConfigMap")
    data: dict[str, str] = config["data"]
    return data


def test_every_setting_named_in_the_manifests_and_the_image_exists(overlay: list[Doc]) -> None:
    names = set(configmap(overlay)) | set(re.findall(r"\b(CR_[A-Z_]+)=", (ROOT / "Dockerfile").read_text()))
    for deployment in of_kind(overlay, "Deployment"):
        for container in all_containers(deployment):
            names |= env_names(container)
    for name in names:
        assert name.startswith("CR_"), name
        field = name.removeprefix("CR_").lower()
        scoped = [(svc, field.removeprefix(f"{svc}_")) for svc in SETTINGS if field.startswith(f"{svc}_")]
        known = field in BaseServiceSettings.model_fields or any(
            rest in SETTINGS[svc].model_fields for svc, rest in scoped
        )
        # A shared name (CR_METRICS_PORT) must mean something to at least one service.
        known = known or any(field in cls.model_fields for cls in SETTINGS.values())
        assert known, f"{name} is no setting of any service"


def test_addresses_and_ports_agree(overlay: list[Doc]) -> None:
    config = configmap(overlay)
    services = by_name(overlay, "Service")
    for name, port in GRPC.items():
        assert config[f"CR_{name.upper()}_ADDR"] == f"{name}:{port}"
        # Headless: callers resolve every ready replica and round-robin over them.
        assert services[name]["spec"]["clusterIP"] == "None"
        assert {p["name"]: p["port"] for p in services[name]["spec"]["ports"]} == {
            "grpc": port,
            "metrics": int(config["CR_METRICS_PORT"]),
        }
    assert {p["port"] for p in services["gateway"]["spec"]["ports"]} == {int(config["CR_GATEWAY_PORT"])}
    nats_replicas = yaml.safe_load((K8S / "platform" / "nats-values.yaml").read_text())["config"]["cluster"]
    assert 1 <= int(config["CR_NATS_STREAM_REPLICAS"]) <= nats_replicas["replicas"]


def test_ingress_routes_only_the_api_and_webhooks_to_the_gateway(overlay: list[Doc]) -> None:
    (ingress,) = of_kind(overlay, "Ingress")
    routes = {
        (path["path"], path["pathType"], path["backend"]["service"]["name"], path["backend"]["service"]["port"]["name"])
        for rule in ingress["spec"]["rules"]
        for path in rule["http"]["paths"]
    }
    assert routes == {("/v1", "Prefix", "gateway", "http"), ("/webhooks/", "Prefix", "gateway", "http")}
    hosts = {rule["host"] for rule in ingress["spec"]["rules"]}
    assert hosts == {h for tls in ingress["spec"]["tls"] for h in tls["hosts"]}
    assert configmap(overlay)["CR_GATEWAY_BASE_URL"] in {f"https://{h}/v1" for h in hosts}


def callers_in_code() -> dict[str, set[str]]:
    """Who dials whom: every ``<service>_addr`` a process's own code reads."""
    callers: dict[str, set[str]] = {name: set() for name in GRPC}
    for caller in COMPONENTS:
        for path in (ROOT / "services" / caller).rglob("*.py"):
            for callee in re.findall(r"\b(billing|indexer|analyzer|hostapp)_addr\b", path.read_text()):
                if callee != caller:
                    callers[callee].add(caller)
    return callers


def policies_for(docs: list[Doc], name: str) -> list[Doc]:
    return [
        p
        for p in of_kind(docs, "NetworkPolicy")
        if p["spec"]["podSelector"]
        and matches(
            p["spec"]["podSelector"].get("matchLabels", {}),
            {
                "app.kubernetes.io/name": "codereview",
                "app.kubernetes.io/component": name,
            },
        )
    ]


def peers(rule: Doc, key: str) -> list[Doc]:
    return list(rule.get(key, []))


def test_everything_is_denied_by_default(overlay: list[Doc]) -> None:
    policies = by_name(overlay, "NetworkPolicy")
    deny = policies["default-deny"]["spec"]
    assert deny["podSelector"] == {}
    assert sorted(deny["policyTypes"]) == ["Egress", "Ingress"]
    assert "ingress" not in deny
    assert "egress" not in deny


def test_each_service_is_reachable_only_from_its_callers_and_metrics_only_from_monitoring(overlay: list[Doc]) -> None:
    callers = callers_in_code()
    assert callers["indexer"] >= {"gateway", "analyzer", "hostapp"}  # the scan sees the code
    config = configmap(overlay)
    for name in COMPONENTS:
        (policy,) = policies_for(overlay, name)
        assert sorted(policy["spec"]["policyTypes"]) == ["Egress", "Ingress"]
        allowed_components: set[str] = set()
        for rule in policy["spec"]["ingress"]:
            ports = {p["port"] for p in rule["ports"]}
            for peer in peers(rule, "from"):
                assert "ipBlock" not in peer, "nothing is let in by address"
                if "namespaceSelector" in peer:
                    namespace = peer["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
                    assert name in OUTSIDE[namespace], (name, namespace)
                    if namespace == "monitoring":
                        metrics = {int(config["CR_GATEWAY_PORT"])} if name == "gateway" else {9090}
                        assert ports == metrics
                else:
                    allowed_components.add(component(peer["podSelector"]["matchLabels"]) or "")
                    assert name in GRPC
                    assert ports == {GRPC[name]}
        assert allowed_components == callers.get(name, set()), name


def test_egress_allows_exactly_the_calls_the_code_makes_plus_nats_and_its_database(overlay: list[Doc]) -> None:
    callers = callers_in_code()
    for name in COMPONENTS:
        (policy,) = policies_for(overlay, name)
        calls: set[str] = set()
        databases: set[str] = set()
        nats = False
        for rule in policy["spec"]["egress"]:
            for peer in peers(rule, "to"):
                labels = peer.get("podSelector", {}).get("matchLabels", {})
                if component(labels):
                    callee = component(labels) or ""
                    calls.add(callee)
                    assert {p["port"] for p in rule["ports"]} == {GRPC[callee]}
                elif "cnpg.io/cluster" in labels:
                    databases.add(labels["cnpg.io/cluster"])
                elif labels.get("app.kubernetes.io/name") == "nats":
                    nats = True
        assert calls == {callee for callee, who in callers.items() if name in who}, name
        assert databases == (set() if name == "gateway" else {f"{name}-db"})
        assert nats == (name != "gateway")


def test_each_database_and_nats_accept_only_their_clients(overlay: list[Doc]) -> None:
    policies = by_name(overlay, "NetworkPolicy")
    for name in GRPC:
        ingress = policies[f"{name}-db"]["spec"]["ingress"]
        app_peers = {
            component(peer["podSelector"]["matchLabels"])
            for rule in ingress
            for peer in peers(rule, "from")
            if "podSelector" in peer and component(peer["podSelector"]["matchLabels"])
        }
        assert app_peers == {name}
    nats_clients = {
        component(peer["podSelector"]["matchLabels"])
        for rule in policies["nats"]["spec"]["ingress"]
        for peer in peers(rule, "from")
        if "podSelector" in peer and component(peer["podSelector"]["matchLabels"])
    }
    assert nats_clients == set(GRPC)


def test_platform_databases_are_the_ones_the_services_read(overlay: list[Doc]) -> None:
    clusters = by_name(rendered("platform/postgres"), "Cluster")
    assert set(clusters) == {f"{name}-db" for name in GRPC}
    for name, cluster in clusters.items():
        assert cluster["spec"]["instances"] >= 2
        assert cluster["spec"]["bootstrap"]["initdb"]["database"] == name.removesuffix("-db")
    for name in GRPC:
        (ref,) = [
            e["valueFrom"]["secretKeyRef"]
            for e in main_container(by_name(overlay, "Deployment")[name])["env"]
            if e["name"] == f"CR_{name.upper()}_DATABASE_URL"
        ]
        # CloudNativePG writes <cluster>-app with the connection URI.
        assert ref == {"name": f"{name}-db-app", "key": "uri"}


SECRETISH = re.compile(r"SECRET|PASSWORD|TOKEN|_KEY$|DATABASE_URL|PRIVATE")
SECRET_VALUE = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----|\bsk_(live|test)_[0-9a-zA-Z]{8,}|\bwhsec_[0-9a-zA-Z]{8,}"
    r"|\bgh[pousr]_[0-9A-Za-z]{20,}|postgres(ql)?://[^:\s/]+:[^@\s]+@"
)


def test_no_secret_values_in_the_manifests_or_the_repository(overlay: list[Doc]) -> None:
    assert of_kind(overlay, "Secret") == []
    assert not any(k for k in configmap(overlay) if SECRETISH.search(k)), "secrets go in Secrets"
    documented = (ROOT / "docs" / "deploy.md").read_text()
    for deployment in of_kind(overlay, "Deployment"):
        for container in all_containers(deployment):
            for env in container.get("env", []):
                if SECRETISH.search(env["name"]):
                    # From a Secret, or (the app's key) a path to a file mounted from one.
                    assert "valueFrom" in env or env["value"].startswith("/var/run/secrets/"), env["name"]
                ref = env.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["name"] in documented, ref
                    assert ref["key"] in documented, ref
        for volume in pod(deployment)["volumes"]:
            if "secret" in volume:
                assert volume["secret"]["secretName"] in documented
    scanned = [
        ROOT / "Dockerfile",
        ROOT / "docs" / "deploy.md",
        *(p for p in (ROOT / "deploy").rglob("*") if p.is_file()),
    ]
    for path in scanned:
        text = path.read_text()
        assert not SECRET_VALUE.search(text), path
        for doc in yaml.safe_load_all(text) if path.suffix == ".yaml" else ():
            assert not (isinstance(doc, dict) and doc.get("kind") == "Secret"), path


def test_the_secret_scan_recognises_secrets() -> None:
    for sample in ("-----BEGIN RSA PRIVATE KEY-----", "sk_live_" + "a1" * 8, "postgresql://app:hunter2@db/app"):
        assert SECRET_VALUE.search(sample)
    assert not SECRET_VALUE.search("postgresql://billing-db-rw:5432/billing")


@pytest.mark.parametrize("name", ["staging", "production"])
def test_overlays_differ_where_they_should(name: str) -> None:
    docs = rendered(f"overlays/{name}")
    namespaces = {d["metadata"].get("namespace") for d in docs}
    assert namespaces == {"codereview" if name == "production" else "codereview-staging"}
    assert configmap(docs)["CR_ENVIRONMENT"] == name


def test_every_operator_secret_key_is_optional_as_documented(overlay: list[Doc]) -> None:
    """deploy.md: every key of the Secrets the operator writes is optional in the manifests, so the
    pod starts and a missing webhook secret is refused by the gateway itself, with a message that
    names it (outside development), rather than by the kubelet; ``off`` switches a receiver off."""
    documented = " ".join((ROOT / "docs" / "deploy.md").read_text().split())
    assert "Every key is optional except the two webhook secrets" in documented
    assert "gateway refuses to start when one is empty or absent; the value `off` switches" in documented
    refs = [
        env["valueFrom"]["secretKeyRef"]
        for deployment in of_kind(overlay, "Deployment")
        for container in all_containers(deployment)
        for env in container.get("env", [])
        if "secretKeyRef" in env.get("valueFrom", {})
    ]
    operators = [ref for ref in refs if ref["name"].startswith("codereview-")]
    assert {ref["key"] for ref in operators} >= {"code-host-webhook-secret", "payment-webhook-secret"}
    assert [ref for ref in operators if not ref.get("optional")] == []


def test_the_secret_commands_create_every_file_they_read() -> None:
    documented = (ROOT / "docs" / "deploy.md").read_text()
    block = documented[documented.index("umask 077") :]
    block = block[: block.index("```")]
    read = set(re.findall(r"--from-file=([\w-]+)(?=\s|$)", block))
    written = set(re.findall(r">\s*([\w-]+)", block))
    assert read >= {"code-host-webhook-secret", "payment-webhook-secret"}
    assert read <= written, read - written
