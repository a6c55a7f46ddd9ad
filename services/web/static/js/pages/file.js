import { api, enc } from "../api.js";
import { act, announce, clear, errorBox, h, pct } from "../ui.js";

function evidence(ev) {
  if (!ev) return null;
  const facts = [];
  if (ev.choice) facts.push(`the repository uses ${ev.choice}`);
  if (ev.share !== null && ev.share !== undefined) facts.push(`${pct(ev.share)} of ${ev.count ?? "?"} observations`);
  if (ev.scope?.kind) facts.push(`in ${ev.scope.kind} ${ev.scope.value || ""}`.trim());
  return h(
    "div",
    { class: "evidence" },
    ev.description ? h("p", {}, ev.description) : null,
    facts.length ? h("p", { class: "muted" }, facts.join(" · ")) : null,
    ev.examples?.length ? h("p", { class: "muted" }, "Examples: ", ev.examples.slice(0, 3).map((e, i) => [i ? ", " : "", h("code", {}, e)])) : null,
  );
}

function card(finding, onVerdict) {
  const buttons = [
    ["accepted", "Accept", "secondary"],
    ["dismissed", "Dismiss", "danger"],
  ].map(([verdict, text, cls]) => {
    const b = h("button", { type: "button", class: cls, "aria-label": `${text} ${finding.rule} on line ${finding.start_line}` }, text);
    b.addEventListener("click", () => onVerdict(finding, verdict, b));
    return b;
  });
  return h(
    "article",
    { class: `finding sev-${finding.severity}`, "data-rule": finding.rule, "data-line": finding.start_line, "aria-label": `${finding.severity}: ${finding.rule}` },
    h("p", {}, h("strong", {}, `Line ${finding.start_line}`), " · ", h("span", { class: `badge sev-${finding.severity}` }, finding.severity), " ", h("code", {}, finding.rule), ` · confidence ${pct(finding.confidence)}`),
    h("p", {}, finding.message),
    evidence(finding.evidence),
    finding.suggestion ? h("p", {}, "Suggestion: ", h("code", {}, finding.suggestion)) : null,
    h("div", { class: "actions" }, buttons),
  );
}

export default async function file(main, { params, query }) {
  const [repoId] = params;
  const path = query.get("path") || "";
  document.title = `${path} · Code Review`;
  const slot = h("div", {});
  const status = h("div", { role: "status" });
  const body = h("div", {}, h("p", { class: "muted" }, "Analyzing…"));
  clear(main, h("p", {}, h("a", { href: `/repositories/${enc(repoId)}` }, "← Repository")), h("h1", {}, h("code", {}, path)), slot, status, body);
  if (!path) {
    clear(body, errorBox({ message: "no path given", code: "validation_failed" }));
    return;
  }

  async function verdict(finding, value, button) {
    await act(button, slot, async () => {
      const result = await api("POST", `/repositories/${enc(repoId)}/report_findings`, { feedback: [{ finding_id: finding.id, verdict: value }] });
      const rule = (result.calibration?.rules || []).find((r) => r.rule === finding.rule);
      const note = `Recorded ${value} for ${finding.rule} on line ${finding.start_line}` + (rule ? ` (rule now ${rule.state}, false-positive rate ${pct(rule.false_positive_rate)})` : "");
      clear(status, h("div", { class: "notice" }, note));
      announce(note);
      await analyze();
    });
  }

  let lines = null;
  async function analyze() {
    const [result, source] = await Promise.all([
      api("POST", `/repositories/${enc(repoId)}/analyze`, { path }),
      lines ? null : api("GET", `/repositories/${enc(repoId)}/file?path=${enc(path)}`),
    ]);
    if (source) lines = source.content.split("\n");
    const findings = [...result.findings].sort((a, b) => a.start_line - b.start_line || a.rule.localeCompare(b.rule));
    const skipped = result.skipped || [];
    const byLine = new Map();
    for (const f of findings) {
      const line = Math.max(1, Math.min(f.start_line || 1, lines.length));
      if (!byLine.has(line)) byLine.set(line, []);
      byLine.get(line).push(f);
    }
    // The file's lines, each finding drawn under the line it starts on.
    const source_ = h(
      "ol",
      {},
      lines.map((text, i) => {
        const here = byLine.get(i + 1) || [];
        return h("li", { class: here.length ? "flagged" : "", id: `L${i + 1}` }, text || " ", here.map((f) => card(f, verdict)));
      }),
    );
    clear(
      body,
      h("p", { class: "muted" }, `${findings.length} finding${findings.length === 1 ? "" : "s"} at model commit `, h("code", {}, (result.commit || "").slice(0, 10)), ` · ${Math.round(result.duration_ms)} ms`),
      skipped.map((s) => h("div", { class: "notice" }, `Skipped: ${s.reason}`)),
      findings.length ? null : h("p", {}, "No findings: this file follows the repository's conventions."),
      h("section", { class: "source", "aria-label": `Content of ${path}`, tabindex: "0" }, source_),
    );
  }
  await act(null, slot, analyze);
}
