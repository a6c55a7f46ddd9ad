"""Domains, segments and the import network over hand-built FileFacts."""

from __future__ import annotations

import time

import msgspec
import pytest

from services.indexer.structure import (
    ROOT_DOMAIN,
    DomainIndex,
    GroupEdge,
    analyze_structure,
    build_network,
    detect_domains,
    detect_segments,
    import_edges,
    strongly_connected_components,
)
from services.source.facts import FileFacts, Import


def ff(path: str, *imports: str, lines: int = 10, lang: str = "python", module: str = "", **kw: object) -> FileFacts:
    is_test = bool(kw.pop("is_test", "test" in path.rsplit("/", 1)[-1]))
    return FileFacts(
        path=path,
        language=lang,
        size=lines * 20,
        lines=lines,
        is_test=is_test,
        module=module,
        imports=tuple(Import(module=t, names=(), line=i + 1, resolved_path=t) for i, t in enumerate(imports)),
    )


def domains_of(files: list[FileFacts]) -> dict[str, str]:
    return {d.name: d.path_prefix for d in detect_domains(files)}


def test_monorepo_container_is_split_into_services() -> None:
    files = [
        ff("services/__init__.py"),
        ff("services/indexer/git/runner.py"),
        ff("services/indexer/history.py", "services/kit/db.py"),
        ff("services/analyzer/engine.py", "services/kit/db.py"),
        ff("services/kit/db.py"),
        ff("tests/indexer/test_git.py", "services/indexer/git/runner.py"),
        ff("tests/analyzer/test_engine.py", "services/analyzer/engine.py"),
        ff("bench/replay.py"),
        ff("conftest.py", is_test=True),
        FileFacts(path="README.md", language="", size=10, lines=1),
    ]
    found = {d.name: d for d in detect_domains(files)}
    assert {n: d.path_prefix for n, d in found.items()} == {
        ROOT_DOMAIN: "",
        "bench": "bench/",
        "services": "services/",
        "analyzer": "services/analyzer/",
        "indexer": "services/indexer/",
        "kit": "services/kit/",
        "tests": "tests/",
    }
    assert (found["indexer"].file_count, found["indexer"].line_count) == (2, 20)
    assert (found["tests"].test_file_count, found["tests"].languages) == (2, ("python",))
    assert found[ROOT_DOMAIN].file_count == 1  # conftest.py; README.md is not code


def test_src_wrapper_and_lone_package_are_descended() -> None:
    files = [
        ff("setup.py"),
        ff("src/shop/__init__.py"),
        ff("src/shop/orders/models.py"),
        ff("src/shop/orders/views.py"),
        ff("src/shop/billing/invoice.py"),
        ff("src/shop/billing/tax.py"),
        ff("tests/test_orders.py"),
    ]
    assert domains_of(files) == {
        ROOT_DOMAIN: "",
        "shop": "src/shop/",
        "orders": "src/shop/orders/",
        "billing": "src/shop/billing/",
        "tests": "tests/",
    }


def test_java_layout_names_domains_after_meaningful_directories() -> None:
    files = [ff(f"src/main/java/com/acme/{area}/{cls}.java", lang="java") for area in ("pay", "ship") for cls in "AB"]
    files.append(ff("src/test/java/com/acme/pay/ATest.java", lang="java", is_test=True))
    assert domains_of(files) == {
        "pay": "src/main/java/com/acme/pay/",
        "ship": "src/main/java/com/acme/ship/",
        "test": "src/test/",
    }


def _cluster_repo(cohesive: bool) -> list[FileFacts]:
    files = [ff("tools/gen.py"), ff("tools/lint.py")]
    for group, other in (("alpha", "beta"), ("beta", "alpha")):
        for i in range(8):
            target = f"app/{group}/m{(i + 1) % 8}.py" if cohesive else f"app/{other}/m{i}.py"
            files.append(ff(f"app/{group}/m{i}.py", target))
    return files


def test_import_clustering_splits_only_self_contained_subdirectories() -> None:
    assert domains_of(_cluster_repo(cohesive=True)) == {
        "alpha": "app/alpha/",
        "beta": "app/beta/",
        "tools": "tools/",
    }
    assert domains_of(_cluster_repo(cohesive=False)) == {"app": "app/", "tools": "tools/"}


def test_segments_recognize_layers_by_name() -> None:
    files = [
        ff("svc/api/routes.py"),
        ff("svc/api/deps.py"),
        ff("svc/models.py"),
        ff("svc/schemas/user.py"),
        ff("svc/services/users.py"),
        ff("svc/db/session.py"),
        ff("svc/_utils.py"),
        ff("svc/tests/test_users.py"),
        ff("svc/cli/main.py"),
        ff("svc/migrations/0001_init.py"),
        ff("svc/core/thing.py"),
        ff("svc/main.py"),
        ff("other/x.py"),
    ]
    domains = detect_domains(files)
    segments = {s.name: s for s in detect_segments(files, domains) if s.domain == "svc"}
    assert {n: (s.kind, s.path_prefix, s.file_count) for n, s in segments.items()} == {
        ".": ("module", "svc/", 1),
        "_utils": ("utils", "svc/_utils", 1),
        "api": ("api", "svc/api/", 2),
        "cli": ("cli", "svc/cli/", 1),
        "core": ("package", "svc/core/", 1),
        "db": ("repository", "svc/db/", 1),
        "migrations": ("migrations", "svc/migrations/", 1),
        "models": ("models", "svc/models", 1),
        "schemas": ("models", "svc/schemas/", 1),
        "services": ("services", "svc/services/", 1),
        "tests": ("tests", "svc/tests/", 1),
    }


def test_network_edges_degrees_cycles_and_group_edges() -> None:
    files = [
        ff("web/api/a.py", "core/services/b.py", "core/services/b.py"),
        ff("core/services/b.py", "core/db/c.py"),
        ff("core/db/c.py", "core/services/b.py", "web/api/a.py"),
        ff("core/models/d.py"),
        ff("web/api/e.py", "core/models/d.py", "web/api/e.py"),  # self-import ignored
        ff("web/tests/test_a.py", "web/api/a.py"),
    ]
    files.append(ff("web/api/f.py", lines=3))
    files[3] = ff("core/models/d.py", module="core.models.d")
    files[4] = FileFacts(
        path="web/api/e.py",
        language="python",
        size=1,
        lines=1,
        imports=(Import(module="core.models.d", names=("D",), line=1), Import(module="os", names=(), line=2)),
    )
    structure = analyze_structure(files)
    net = structure.network
    edges = {(e.source, e.target): e.weight for e in net.edges}
    assert edges[("web/api/a.py", "core/services/b.py")] == 2
    assert edges[("web/api/e.py", "core/models/d.py")] == 1  # resolved through the module name
    assert ("web/api/e.py", "web/api/e.py") not in edges
    nodes = {n.path: n for n in net.nodes}
    assert (nodes["core/services/b.py"].in_degree, nodes["core/services/b.py"].out_degree) == (2, 1)
    assert nodes["web/api/a.py"].domain == "web"
    assert net.cycles == [["core/db/c.py", "core/services/b.py", "web/api/a.py"]]
    domain_edges = {(e.source, e.target): e for e in net.domain_edges}
    assert domain_edges[("web", "core")] == GroupEdge("web", "core", 3, True)
    assert domain_edges[("core", "web")] == GroupEdge("core", "web", 1, True)
    layers = {(e.source, e.target): e for e in net.layer_edges}
    assert layers[("api", "services")] == GroupEdge("api", "services", 2, False)
    assert layers[("repository", "services")] == GroupEdge("repository", "services", 1, True)
    assert layers[("tests", "api")] == GroupEdge("tests", "api", 1, False)
    decoded = msgspec.json.decode(msgspec.json.encode(structure))
    assert set(decoded) == {"domains", "segments", "network"}


def test_edges_to_files_outside_the_list_still_become_nodes() -> None:
    files = [ff("a/x.py", "a/generated.py")]
    net = build_network(files, detect_domains(files))
    assert [n.path for n in net.nodes] == ["a/generated.py", "a/x.py"]


def test_tarjan_is_iterative_on_deep_graphs() -> None:
    n = 50_000
    chain = {f"m{i}": [f"m{i + 1}"] for i in range(n)}
    chain[f"m{n}"] = ["m0"]
    (component,) = strongly_connected_components(chain)
    assert len(component) == n + 1
    assert strongly_connected_components({"a": ["b"], "b": []}) == [["b"], ["a"]]


def test_domain_index_longest_prefix() -> None:
    domains = detect_domains([ff("services/a/x.py"), ff("services/b/y.py"), ff("z.py")])
    index = DomainIndex(domains)
    assert index.domain_of("services/a/deep/q.py") == "a"
    assert index.domain_of("elsewhere.py") == ROOT_DOMAIN
    assert detect_domains([]) == []


@pytest.mark.parametrize("n_files", [10_000])
def test_ten_thousand_files_in_well_under_a_second(n_files: int) -> None:
    def path(i: int) -> str:
        i %= n_files
        return f"src/proj/area{i % 10}/pkg{(i // 10) % 20}/m{i}.py"

    # Mostly imports within the same package, one to the neighbouring area.
    files = [ff(path(i), path(i + 200), path(i + 400), path(i + 1)) for i in range(n_files)]
    assert len(import_edges(files)) > 2 * n_files
    # CPU time, not wall time: other processes on a shared CI machine must not fail this.
    started = time.process_time()
    structure = analyze_structure(files)
    elapsed = time.process_time() - started
    assert elapsed < 1.0, elapsed
    assert len(structure.network.nodes) == n_files
    assert len(structure.domains) >= 10
