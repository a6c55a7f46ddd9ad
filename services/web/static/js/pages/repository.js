import { api, enc } from "../api.js";
import { navigate } from "../app.js";
import { act, badge, clear, field, h, loadScript, pct, short, table, when } from "../ui.js";

const CHART = "/static/vendor/chart.js/chart.umd.min.js";
const CYTOSCAPE = "/static/vendor/cytoscape/cytoscape.min.js";
const SEVERITY_COLOURS = { error: "#a4161a", warning: "#b26a00", info: "#1a7f37" };

function conventionRows(list) {
  return list.map((c) =>
    h(
      "tr",
      {},
      h("td", {}, h("code", {}, c.rule)),
      h("td", {}, c.choice),
      h("td", {}, pct(c.share)),
      h("td", {}, c.count),
      h("td", {}, c.scope?.kind ? `${c.scope.kind} ${c.scope.value || ""}` : "repository"),
      h("td", {}, c.source || "learned", c.declared?.file ? ` (${c.declared.file})` : ""),
      h("td", {}, (c.examples || []).slice(0, 2).map((e, i) => [i ? ", " : "", h("code", {}, e)])),
    ),
  );
}
const CONVENTION_HEADERS = ["Rule", "Choice", "Share", "Count", "Scope", "Source", "Examples"];

function overview(repoId, context, board) {
  const declared = [...(context.strongest_conventions || []), ...(context.report_conventions || [])].filter((c) => c.source && c.source !== "learned");
  return [
    h(
      "div",
      { class: "grid" },
      h("div", { class: "panel" }, h("h2", {}, "Index"), h("p", {}, badge(board.index.state), " head ", h("code", {}, short(context.head_sha)), " · model ", h("code", {}, short(context.commit))), h("p", { class: "muted" }, `Learned ${when(context.learned_at)} · ${context.files} files · ${context.history?.commits ?? 0} commits read`)),
      h("div", { class: "panel" }, h("h2", {}, "Languages"), table(["Language", "Files", "Lines"], (context.languages || []).map((l) => h("tr", {}, h("td", {}, l.language), h("td", {}, l.files), h("td", {}, l.lines))), "Languages")),
    ),
    h("h2", {}, "Strongest conventions"),
    table(CONVENTION_HEADERS, conventionRows(board.strongest_conventions || context.strongest_conventions || []), "Strongest conventions"),
    h("h2", {}, "Weakest conventions"),
    (board.weakest_conventions || []).length ? table(CONVENTION_HEADERS, conventionRows(board.weakest_conventions), "Weakest conventions") : h("p", { class: "muted" }, "None."),
    h("h2", {}, "Declared conventions"),
    h("p", { class: "muted" }, context.config?.declared?.files?.length ? `Read from ${context.config.declared.files.join(", ")}` : "No tool configuration read.", context.config?.file ? ` · repository config ${context.config.file}${context.config.present ? "" : " (absent)"}` : ""),
    declared.length ? table(CONVENTION_HEADERS, conventionRows(declared), "Declared conventions") : null,
    h("h2", {}, "Hot spots"),
    (context.hot_spots || []).length
      ? table(["File", "Score", "Commits", "Fix commits", "Churn"], context.hot_spots.map((s) => h("tr", {}, h("td", {}, h("a", { href: `/repositories/${enc(repoId)}/file?path=${enc(s.path)}` }, s.path)), h("td", {}, s.score.toFixed(1)), h("td", {}, s.commits), h("td", {}, s.fix_commits), h("td", {}, s.churn))), "Hot spots")
      : h("p", { class: "muted" }, "No history read yet."),
  ];
}

async function findingsChart(container, board) {
  const days = board.findings.over_time || [];
  const summary = h("p", {}, `${board.findings.total} findings in ${board.window_days} days · by severity: `, Object.entries(board.findings.by_severity || {}).map(([s, n]) => `${s} ${n}`).join(", ") || "none");
  if (!days.length) {
    clear(container, summary, h("p", { class: "muted" }, "No analyses yet."));
    return;
  }
  const canvas = h("canvas", { role: "img", "aria-label": "Findings per day by severity" });
  clear(container, summary, h("div", { class: "chart" }, canvas));
  await loadScript(CHART);
  const severities = ["error", "warning", "info"];
  new window.Chart(canvas, {
    type: "bar",
    data: {
      labels: days.map((d) => d.date),
      datasets: severities.map((s) => ({ label: s, data: days.map((d) => d.by_severity[s] || 0), backgroundColor: SEVERITY_COLOURS[s] })),
    },
    options: { responsive: true, maintainAspectRatio: false, animation: false, scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } },
  });
}

function acceptance(board) {
  const rows = (board.acceptance || []).map((r) =>
    h("tr", {}, h("td", {}, h("code", {}, r.rule)), h("td", {}, r.reported), h("td", {}, r.accepted + r.fixed), h("td", {}, r.dismissed + r.false_positive), h("td", {}, pct(r.acceptance_rate)), h("td", {}, r.state)),
  );
  return [h("p", {}, `False-positive rate overall: ${pct(board.false_positive_rate)}`), rows.length ? table(["Rule", "Reported", "Accepted or fixed", "Dismissed or false positive", "Acceptance", "State"], rows, "Accepted and dismissed per rule") : h("p", { class: "muted" }, "No verdicts reported yet.")];
}

async function allSegments(repoId) {
  const out = [];
  let cursor = "";
  do {
    const page = await api("GET", `/repositories/${enc(repoId)}/segments?limit=2000${cursor ? `&cursor=${enc(cursor)}` : ""}`);
    out.push(...page.segments);
    cursor = page.page?.next_cursor || "";
  } while (cursor);
  return out;
}

async function structure(container, repoId) {
  const [domains, network] = await Promise.all([api("GET", `/repositories/${enc(repoId)}/domains`), api("GET", `/repositories/${enc(repoId)}/network?limit=10000`)]);
  const domainOf = new Map(network.nodes.map((n) => [n.path, n.domain]));
  const inCycle = new Set(network.cycles.flat().map((p) => domainOf.get(p)).filter(Boolean));
  const segmentsSlot = h("div", { "aria-live": "polite" });
  let segments = null;
  async function showDomain(name) {
    segments = segments || (await allSegments(repoId));
    const mine = segments.filter((s) => s.domain === name);
    clear(segmentsSlot, h("h3", {}, `Segments of ${name || "(root)"}`), mine.length ? table(["Segment", "Kind", "Path", "Files"], mine.map((s) => h("tr", {}, h("td", {}, s.name), h("td", {}, s.kind), h("td", {}, h("code", {}, s.path_prefix || "/")), h("td", {}, s.file_count))), `Segments of ${name}`) : h("p", { class: "muted" }, "No segments."));
  }
  const graph = h("div", { class: "graph", role: "img", "aria-label": `Import graph of ${domains.domains.length} domains; the table below lists its edges` });
  const domainButtons = domains.domains.map((d) => {
    const b = h("button", { type: "button", class: "secondary", "data-domain": d.name }, `${d.name || "(root)"} · ${d.file_count} files${inCycle.has(d.name) ? " · in a cycle" : ""}`);
    b.addEventListener("click", () => act(b, segmentsSlot, () => showDomain(d.name)));
    return b;
  });
  const edgeRows = network.domain_edges.map((e) => h("tr", { class: e.reverse ? "cycle" : "" }, h("td", {}, e.source), h("td", {}, e.target), h("td", {}, e.weight), h("td", {}, e.reverse ? "both ways (cycle)" : "one way")));
  const layerRows = network.layer_edges.map((e) => h("tr", {}, h("td", {}, e.source), h("td", {}, e.target), h("td", {}, e.weight), h("td", {}, e.reverse ? "both ways" : "one way")));
  clear(
    container,
    h("p", {}, `${network.counts.nodes} files, ${network.counts.edges} import edges, ${network.counts.cycles} import cycles, ${domains.domains.length} domains.`),
    h("div", { class: "legend" }, h("span", {}, "Arrow: imports (width = import statements)"), h("span", {}, "Red: imports both ways or a domain holding a file cycle")),
    graph,
    h("h3", {}, "Domains (choose one for its segments)"),
    h("div", { class: "actions" }, domainButtons),
    segmentsSlot,
    h("h3", {}, "Domain imports"),
    edgeRows.length ? table(["From", "To", "Imports", "Direction"], edgeRows, "Domain imports") : h("p", { class: "muted" }, "No imports between domains."),
    h("h3", {}, "Layering"),
    layerRows.length ? table(["From layer", "To layer", "Imports", "Direction"], layerRows, "Layer imports") : h("p", { class: "muted" }, "No imports between layers."),
  );
  await loadScript(CYTOSCAPE);
  const maxWeight = Math.max(1, ...network.domain_edges.map((e) => e.weight));
  const cy = window.cytoscape({
    container: graph,
    elements: [
      ...domains.domains.map((d) => ({ data: { id: `d:${d.name}`, name: d.name, label: `${d.name || "(root)"} (${d.file_count})`, size: 24 + Math.sqrt(d.file_count) * 6, cycle: inCycle.has(d.name) ? 1 : 0 } })),
      ...network.domain_edges.map((e, i) => ({ data: { id: `e${i}`, source: `d:${e.source}`, target: `d:${e.target}`, weight: e.weight, width: 1 + (7 * e.weight) / maxWeight, cycle: e.reverse ? 1 : 0 } })),
    ],
    style: [
      { selector: "node", style: { label: "data(label)", width: "data(size)", height: "data(size)", "background-color": "#0b5cad", color: "#1b1f24", "font-size": 12, "text-valign": "bottom", "text-margin-y": 4 } },
      { selector: "node[cycle = 1]", style: { "border-width": 4, "border-color": "#a4161a" } },
      { selector: "edge", style: { width: "data(width)", "line-color": "#6e7781", "target-arrow-color": "#6e7781", "target-arrow-shape": "triangle", "curve-style": "bezier", label: "data(weight)", "font-size": 10 } },
      { selector: "edge[cycle = 1]", style: { "line-color": "#a4161a", "target-arrow-color": "#a4161a" } },
    ],
    layout: { name: network.domain_edges.length ? "breadthfirst" : "grid", directed: true, padding: 20, spacingFactor: 1.2 },
    wheelSensitivity: 0.3,
  });
  cy.on("tap", "node", (event) => act(null, segmentsSlot, () => showDomain(event.target.data("name"))));
  graph.dataset.nodes = String(cy.nodes().length);
  graph.dataset.edges = String(cy.edges().length);
}

export default async function repository(main, { params }) {
  const [repoId] = params;
  const slot = h("div", {});
  const repo = await api("GET", `/repositories/${enc(repoId)}`);
  const label = repo.name || repo.source || repo.id;
  document.title = `${label} · Code Review`;
  const path = h("input", { type: "text", name: "path", required: true, spellcheck: "false" });
  const open = h("form", { class: "inline", onsubmit: (e) => (e.preventDefault(), navigate(`/repositories/${enc(repoId)}/file?path=${enc(path.value.trim())}`)) }, field("Review a file (repository path)", path), h("button", { type: "submit" }, "Open"));
  const over = h("section", { "aria-labelledby": "over-h" }, h("h2", { id: "over-h" }, "Overview"), h("p", { class: "muted" }, "Loading…"));
  const chart = h("section", { "aria-labelledby": "chart-h" });
  const accepted = h("section", { "aria-labelledby": "acc-h" });
  const struct = h("section", { "aria-labelledby": "struct-h" }, h("h2", { id: "struct-h" }, "Structure"));
  const structBody = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  struct.append(structBody);
  clear(main, h("p", {}, h("a", { href: "/repositories" }, "← Repositories")), h("h1", {}, label), h("p", { class: "muted mono" }, repo.source), slot, open, over, chart, accepted, struct);
  await act(null, slot, async () => {
    const [context, board] = await Promise.all([api("GET", `/repositories/${enc(repoId)}/global_context`), api("GET", `/repositories/${enc(repoId)}/dashboard`)]);
    clear(over, h("h2", { id: "over-h" }, "Overview"), overview(repoId, context, board));
    const chartBody = h("div", {});
    clear(chart, h("h2", { id: "chart-h" }, "Findings over time"), chartBody);
    clear(accepted, h("h2", { id: "acc-h" }, "Accepted and dismissed per rule"), acceptance(board));
    await findingsChart(chartBody, board);
  });
  await act(null, structBody, () => structure(structBody, repoId));
}
