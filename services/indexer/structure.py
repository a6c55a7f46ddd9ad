"""A repository's shape from its parsed files: domains, segments and the import network.

* Domains are the major areas. They start from the directory layout: the top-level source
  directories, after descending through wrappers (``src/`` holding one package). A
  directory is split into its subdirectories when it is a known container (``services/``,
  ``packages/``...), when it is the lone package of the repository, or when it is large and
  its subdirectories import mostly within themselves (import clustering). Files outside
  every chosen directory form the ``(root)`` domain.
* Segments are the groups inside a domain: its first-level directories and layer-named
  modules (``models.py``), each classified as a layer by name (api, models, services...).
* The network is the file-level import graph from resolved imports, its cycles (iterative
  Tarjan), and the edges aggregated between domains and between layers, which is what
  layering conventions are learned from.

All functions are pure and linear in files plus imports.
"""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence

import msgspec

from services.source.facts import FileFacts

ROOT_DOMAIN = "(root)"
DIRECT_SEGMENT = "."
CONTAINER_NAMES = frozenset(
    {"src", "lib", "libs", "packages", "pkgs", "services", "apps", "applications", "modules", "internal"}
    | {"crates", "plugins", "extensions", "projects", "components", "pkg"}
)
# Names that say nothing about an area; a domain reached through them is named after the
# nearest meaningful ancestor ("packages/billing/src/" is "billing").
GENERIC_NAMES = frozenset({"src", "lib", "source", "sources", "main", "java", "kotlin", "scala", "python", "code"})
TEST_NAMES = frozenset({"test", "tests", "__tests__", "spec", "specs", "testing", "e2e", "integration_tests"})
_LAYER_WORDS = {
    "api": "api routes route router routers views view handlers handler controllers controller endpoints"
    " resources rest graphql grpc web http",
    "models": "models model schemas schema entities entity dto dtos types",
    "services": "services service usecases use_cases usecase logic domain",
    "repository": "repository repositories repo repos db database dao store stores storage persistence orm queries",
    "utils": "utils util helpers helper common shared support tools toolkit",
    "tests": " ".join(sorted(TEST_NAMES)) + " fixtures conftest",
    "cli": "cli cmd commands command bin scripts management console",
    "migrations": "migrations migration alembic migrate",
    "config": "config configs settings conf configuration",
    "ui": "ui components pages templates static widgets screens",
}
LAYERS: dict[str, str] = {word: layer for layer, words in _LAYER_WORDS.items() for word in words.split()}


class Domain(msgspec.Struct, frozen=True):
    name: str
    path_prefix: str  # "" for the (root) domain, else a directory ending in "/"
    file_count: int
    test_file_count: int
    line_count: int
    languages: tuple[str, ...]  # most files first


class Segment(msgspec.Struct, frozen=True):
    domain: str
    name: str  # directory or module name; "." for files directly in the domain directory
    path_prefix: str  # directory ("a/b/"), module path without extension ("a/models"), or the domain's
    kind: str  # a layer from LAYERS, or "package" (directory) / "module" (lone file)
    file_count: int


class Node(msgspec.Struct, frozen=True):
    path: str
    domain: str
    in_degree: int  # distinct files importing this one
    out_degree: int  # distinct files this one imports


class Edge(msgspec.Struct, frozen=True):
    source: str
    target: str
    weight: int  # import statements


class GroupEdge(msgspec.Struct, frozen=True):
    source: str
    target: str
    weight: int
    reverse: bool  # the target group also imports the source group


class Network(msgspec.Struct):
    nodes: list[Node]
    edges: list[Edge]
    cycles: list[list[str]]  # strongly connected components of more than one file
    domain_edges: list[GroupEdge]
    layer_edges: list[GroupEdge]  # between segment kinds, repository-wide


class Structure(msgspec.Struct):
    domains: list[Domain]
    segments: list[Segment]
    network: Network


def _source_files(files: Sequence[FileFacts]) -> list[FileFacts]:
    code = [f for f in files if f.language and not f.skipped]
    return code or [f for f in files if not f.skipped] or list(files)


def source_rule(files: Sequence[FileFacts]) -> str:
    """Which files ``_source_files`` keeps: ``code`` (a language, not skipped), ``read`` (not
    skipped) or ``all``; it only moves when a file's language or skip reason does."""
    if any(f.language and not f.skipped for f in files):
        return "code"
    return "read" if any(not f.skipped for f in files) else "all"


def is_source(facts: FileFacts, rule: str) -> bool:
    if rule == "code":
        return bool(facts.language) and not facts.skipped
    return rule == "all" or not facts.skipped


def with_line_changes(structure: Structure, changes: Sequence[tuple[FileFacts, FileFacts]], rule: str) -> Structure:
    """``structure`` after files changed only in their line counts (``delta.same_shape``):
    what ``analyze_structure`` would give for the new tree, without walking it."""
    delta: Counter[str] = Counter()
    index = DomainIndex(structure.domains)
    for old, new in changes:
        if is_source(new, rule):
            delta[index.domain_of(new.path)] += new.lines - old.lines
    if not any(delta.values()):
        return structure
    domains = [
        msgspec.structs.replace(d, line_count=d.line_count + delta[d.name]) if delta.get(d.name) else d
        for d in structure.domains
    ]
    return Structure(domains=domains, segments=structure.segments, network=structure.network)


def source_modules(files: Sequence[FileFacts]) -> dict[str, str]:
    """module -> path over the files structure looks at: what unresolved imports match."""
    return {f.module: f.path for f in _source_files(files) if f.module}


def import_edges(files: Sequence[FileFacts]) -> Counter[tuple[str, str]]:
    """(importer, imported) -> statements, from ``resolved_path`` or an exact ``module`` match."""
    modules = {f.module: f.path for f in files if f.module}
    edges: Counter[tuple[str, str]] = Counter()
    for f in files:
        for imp in f.imports:
            target = imp.resolved_path or ("" if imp.is_relative else modules.get(imp.module, ""))
            if target and target != f.path:
                edges[(f.path, target)] += 1
    return edges


def _split(prefix: str, paths: Iterable[str]) -> tuple[list[str], dict[str, list[str]]]:
    direct: list[str] = []
    subdirs: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        head, sep, _ = path[len(prefix) :].partition("/")
        (subdirs[head] if sep else direct).append(path)
    return direct, dict(subdirs)


def _descend(prefix: str, paths: list[str], slack: int) -> tuple[str, list[str], dict[str, list[str]]]:
    """Skip directories that only wrap one subdirectory (``src/`` -> ``src/pkg/``); returns the
    directory reached with its direct files and subdirectories."""
    while True:
        direct, subdirs = _split(prefix, paths)
        if len(subdirs) != 1 or len(direct) > slack:
            return prefix, direct, subdirs
        prefix += next(iter(subdirs)) + "/"
        paths = [p for p in paths if p.startswith(prefix)]


class _Layout:
    def __init__(self, files: list[FileFacts], edges: Counter[tuple[str, str]], min_split_files: int, cohesion: float):
        self.tests = {f.path for f in files if f.is_test}
        self.out: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for (src, dst), weight in edges.items():
            self.out[src].append((dst, weight))
        self.min_split_files = min_split_files
        self.cohesion = cohesion

    def is_test_area(self, prefix: str, paths: list[str]) -> bool:
        name = posixpath.basename(prefix.rstrip("/")).lower()
        return name in TEST_NAMES or sum(p in self.tests for p in paths) >= 0.8 * len(paths)

    def cohesive(self, subdirs: dict[str, list[str]]) -> bool:
        # Only edges leaving the candidate's own files are visited: each file is examined once
        # per nesting level, keeping detection linear in imports.
        group = {p: name for name, paths in subdirs.items() for p in paths}
        inside = across = 0
        for src, name in group.items():
            for dst, weight in self.out.get(src, ()):
                other = group.get(dst)
                if other is None:
                    continue
                if other == name:
                    inside += weight
                else:
                    across += weight
        return inside + across > 0 and inside >= self.cohesion * (inside + across)

    def expand(self, prefix: str, paths: list[str], lone: bool, depth: int) -> list[tuple[str, str]]:
        if self.is_test_area(prefix, paths):
            # Test trees mirror the code's layout; they are one area, named where they start.
            return [(posixpath.basename(prefix.rstrip("/")), prefix)]
        start = prefix
        prefix, direct, subdirs = _descend(prefix, paths, slack=0)
        base = posixpath.basename(prefix.rstrip("/")).lower()
        split = (
            depth < 4
            and len(subdirs) >= 2
            and (
                base in CONTAINER_NAMES
                or (lone and len(direct) <= len(paths) / 2)
                or (len(paths) >= self.min_split_files and self.cohesive(subdirs))
            )
        )
        name = _area_name(start, prefix)
        if not split:
            return [(name, prefix)]
        return ([(name, prefix)] if direct else []) + self.expand_children(prefix, subdirs, depth + 1)

    def expand_children(self, prefix: str, subdirs: dict[str, list[str]], depth: int) -> list[tuple[str, str]]:
        # The only non-test child is a "lone package": its own subdirectories are the areas.
        code = [d for d, ps in subdirs.items() if not self.is_test_area(f"{prefix}{d}/", ps)]
        out: list[tuple[str, str]] = []
        for child, child_paths in sorted(subdirs.items()):
            out += self.expand(f"{prefix}{child}/", child_paths, code == [child], depth)
        return out


def _area_name(start: str, prefix: str) -> str:
    """Name a directory reached from ``start`` through wrappers by its last meaningful part."""
    parts = prefix[: len(start) - 1].rsplit("/", 1)[-1:] + prefix[len(start) :].strip("/").split("/")
    for part in reversed(parts):
        if part and part.lower() not in GENERIC_NAMES:
            return part
    return parts[0]


class DomainIndex:
    """Longest-prefix lookup of a path's domain in O(path depth)."""

    def __init__(self, domains: Iterable[Domain]) -> None:
        self.by_prefix = {d.path_prefix: d.name for d in domains}
        self._dirs: dict[str, str] = {}  # directory -> domain: files share directories

    def domain_of(self, path: str) -> str:
        directory = path[: path.rfind("/") + 1]
        found = self._dirs.get(directory)
        if found is None:
            found = self._lookup(directory)
            self._dirs[directory] = found
        return found

    def _lookup(self, directory: str) -> str:
        cut = len(directory) - 1
        while cut != -1:
            name = self.by_prefix.get(directory[: cut + 1])
            if name is not None:
                return name
            cut = directory.rfind("/", 0, cut)
        return self.by_prefix.get("", ROOT_DOMAIN)


def detect_domains(
    files: Sequence[FileFacts],
    *,
    edges: Counter[tuple[str, str]] | None = None,
    min_split_files: int = 12,
    cohesion: float = 0.6,
) -> list[Domain]:
    """The repository's major areas, sorted by path prefix (see the module docstring)."""
    source = _source_files(files)
    paths = sorted(f.path for f in source)
    if not paths:
        return []
    layout = _Layout(source, import_edges(source) if edges is None else edges, min_split_files, cohesion)
    # A few loose files at the root (setup.py, conftest.py) do not stop the descent; they
    # end up in the (root) domain.
    top, _direct, subdirs = _descend("", paths, slack=max(2, len(paths) // 20))
    chosen: list[tuple[str, str]] = []
    if top:
        chosen = layout.expand(top, [p for p in paths if p.startswith(top)], True, 0)
    else:
        chosen = layout.expand_children("", subdirs, 1)
    names = _unique_names(chosen)
    index = DomainIndex(Domain(n, p, 0, 0, 0, ()) for p, n in names.items())
    members: dict[str, list[FileFacts]] = defaultdict(list)
    for f in source:
        members[index.domain_of(f.path)].append(f)
    prefix_of = {n: p for p, n in names.items()} | {ROOT_DOMAIN: ""}
    domains = [_domain(name, prefix_of[name], group) for name, group in members.items()]
    return sorted(domains, key=lambda d: d.path_prefix)


def _unique_names(chosen: list[tuple[str, str]]) -> dict[str, str]:
    """prefix -> name; clashing names grow leading path parts until unique ("a/pkg0", "b/pkg0")."""
    seen = Counter(name for name, _ in chosen)
    names: dict[str, str] = {}
    for name, prefix in chosen:
        if seen[name] > 1:
            parts = prefix.rstrip("/").split("/")
            clashing = [p.rstrip("/").split("/") for n, p in chosen if n == name and p != prefix]
            depth = 2
            while depth < len(parts) and any(other[-depth:] == parts[-depth:] for other in clashing):
                depth += 1
            name = "/".join(parts[-depth:])
        names[prefix] = name
    return names


def _domain(name: str, prefix: str, files: list[FileFacts]) -> Domain:
    langs = Counter(f.language for f in files if f.language)
    return Domain(
        name=name,
        path_prefix=prefix,
        file_count=len(files),
        test_file_count=sum(f.is_test for f in files),
        line_count=sum(f.lines for f in files),
        languages=tuple(lang for lang, _ in sorted(langs.items(), key=lambda kv: (-kv[1], kv[0]))),
    )


def _layer(name: str) -> str | None:
    return LAYERS.get(name.lower().lstrip("_"))


def _segment_key(rel: str) -> tuple[str, str, bool]:
    """(segment name, prefix relative to the domain, is a directory) for a domain-relative path."""
    head, sep, _ = rel.partition("/")
    if sep:
        return head, head + "/", True
    stem = rel.split(".", 1)[0]
    if _layer(stem):
        return stem, stem, False
    return DIRECT_SEGMENT, "", False


def detect_segments(files: Sequence[FileFacts], domains: Sequence[Domain]) -> list[Segment]:
    return _segments(_source_files(files), domains)[0]


def _segments(files: list[FileFacts], domains: Sequence[Domain]) -> tuple[list[Segment], dict[str, str]]:
    """The segments, and each file's segment kind (for layer edges)."""
    index = DomainIndex(domains)
    prefixes = {d.name: d.path_prefix for d in domains}
    groups: dict[tuple[str, str], list[FileFacts]] = defaultdict(list)
    shapes: dict[tuple[str, str], tuple[str, bool]] = {}
    for f in files:
        domain = index.domain_of(f.path)
        prefix = prefixes.get(domain, "")
        name, rel_prefix, is_dir = _segment_key(f.path[len(prefix) :])
        groups[(domain, name)].append(f)
        shapes[(domain, name)] = (prefix + rel_prefix, is_dir)
    segments: list[Segment] = []
    kind_of: dict[str, str] = {}
    for (domain, name), members in groups.items():
        path_prefix, is_dir = shapes[(domain, name)]
        tests = sum(f.is_test for f in members)
        kind = _layer(name) if name != DIRECT_SEGMENT else None
        if kind is None:
            kind = "tests" if tests >= 0.8 * len(members) else ("package" if is_dir or len(members) > 1 else "module")
        segments.append(Segment(domain, name, path_prefix, kind, len(members)))
        for f in members:
            kind_of[f.path] = "tests" if f.is_test else kind
    segments.sort(key=lambda s: (s.domain, s.path_prefix, s.name))
    return segments, kind_of


def strongly_connected_components(graph: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Tarjan's algorithm with an explicit stack: deep import chains cannot hit the recursion limit."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(graph.get(root, ())))]
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component: list[str] = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def _group_edges(weights: Counter[tuple[str, str]]) -> list[GroupEdge]:
    return [
        GroupEdge(src, dst, weight, (dst, src) in weights)
        for (src, dst), weight in sorted(weights.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def build_network(
    files: Sequence[FileFacts],
    domains: Sequence[Domain],
    *,
    edges: Counter[tuple[str, str]] | None = None,
    kind_of: Mapping[str, str] | None = None,
) -> Network:
    source = _source_files(files)
    weights = import_edges(source) if edges is None else edges
    if kind_of is None:
        kind_of = _segments(source, domains)[1]
    index = DomainIndex(domains)
    all_paths = sorted({f.path for f in source} | {dst for _, dst in weights})
    domain_of = {p: index.domain_of(p) for p in all_paths}
    successors: dict[str, list[str]] = defaultdict(list)
    indegree: Counter[str] = Counter()
    domain_weights: Counter[tuple[str, str]] = Counter()
    layer_weights: Counter[tuple[str, str]] = Counter()
    for (src, dst), weight in weights.items():
        successors[src].append(dst)
        indegree[dst] += 1
        src_domain, dst_domain = domain_of[src], domain_of[dst]
        if src_domain != dst_domain:
            domain_weights[(src_domain, dst_domain)] += weight
        src_kind, dst_kind = kind_of.get(src), kind_of.get(dst)
        if src_kind and dst_kind and src_kind != dst_kind:
            layer_weights[(src_kind, dst_kind)] += weight
    nodes = [Node(p, domain_of[p], indegree[p], len(successors.get(p, ()))) for p in all_paths]
    for targets in successors.values():
        targets.sort()
    cycles = sorted(
        (sorted(c) for c in strongly_connected_components(successors) if len(c) > 1),
        key=lambda c: (-len(c), c[0]),
    )
    return Network(
        nodes=nodes,
        edges=[Edge(s, t, w) for (s, t), w in sorted(weights.items())],
        cycles=cycles,
        domain_edges=_group_edges(domain_weights),
        layer_edges=_group_edges(layer_weights),
    )


def analyze_structure(files: Sequence[FileFacts], *, min_split_files: int = 12, cohesion: float = 0.6) -> Structure:
    source = _source_files(files)
    edges = import_edges(source)
    domains = detect_domains(source, edges=edges, min_split_files=min_split_files, cohesion=cohesion)
    segments, kind_of = _segments(source, domains)
    network = build_network(source, domains, edges=edges, kind_of=kind_of)
    return Structure(domains=domains, segments=segments, network=network)
