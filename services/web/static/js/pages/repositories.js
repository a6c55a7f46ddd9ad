import { api, enc } from "../api.js";
import { act, announce, badge, clear, errorBox, field, h, short, showError, table } from "../ui.js";

const POLL_MS = 1000;

function progress(status) {
  const done = status.files_done || 0;
  const total = status.files_total || 0;
  const phase = status.phase || status.state;
  const label = total ? `${phase}: ${done} of ${total} files` : `${phase}…`;
  return h("div", { class: "progress" }, h("progress", { max: total || 1, value: total ? done : 0, "aria-label": "Index progress" }), " ", h("span", {}, label));
}

// Poll the index status until the run ends, redrawing the cell as it goes.
export async function watchIndex(repoId, cell, slot) {
  for (;;) {
    let status;
    try {
      status = await api("GET", `/repositories/${enc(repoId)}/index/status`);
    } catch (err) {
      // Polling shares the token's rate limit: wait as told (Retry-After), then go on.
      if (err.status === 429) {
        await new Promise((resolve) => setTimeout(resolve, 1000 * (Number(err.details.retry_after) || 2)));
        continue;
      }
      showError(slot, err);
      return null;
    }
    if (status.state === "ready" || status.state === "failed" || !status.state) {
      clear(cell, stateCell(status));
      announce(`Index ${status.state || "finished"}`);
      if (status.state === "failed") slot.append(errorBox({ message: status.error || "index failed", code: status.error_code || "index_failed" }));
      return status;
    }
    clear(cell, progress(status));
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function stateCell(status) {
  return h("span", {}, badge(status.state), status.model_commit !== undefined ? h("div", { class: "muted" }, "model ", h("code", {}, short(status.model_commit))) : null);
}

function row(repo, slot, reload) {
  const status = repo.index || {};
  const cell = h("td", {}, stateCell(status));
  const head = h("td", {}, h("code", {}, short(status.head_sha)));
  const indexButton = h("button", { type: "button", class: "secondary" }, "Index");
  const deleteButton = h("button", { type: "button", class: "danger" }, "Delete");
  const label = repo.name || repo.source || repo.id;
  indexButton.setAttribute("aria-label", `Index ${label}`);
  deleteButton.setAttribute("aria-label", `Delete ${label}`);
  indexButton.addEventListener("click", () =>
    act(indexButton, slot, async () => {
      const started = await api("POST", `/repositories/${enc(repo.id)}/index_repo`);
      clear(cell, progress(started));
      await watchIndex(repo.id, cell, slot);
      const latest = await api("GET", `/repositories/${enc(repo.id)}/index/status`);
      clear(head, h("code", {}, short(latest.head_sha)));
      clear(cell, stateCell(latest));
    }),
  );
  deleteButton.addEventListener("click", () => {
    if (!window.confirm(`Delete ${label}? Its index and learned conventions go too.`)) return;
    act(deleteButton, slot, async () => {
      await api("DELETE", `/repositories/${enc(repo.id)}`);
      announce(`${label} deleted`);
      await reload();
    });
  });
  if (status.state === "queued" || status.state === "indexing") watchIndex(repo.id, cell, slot);
  else if (status.state) {
    // The model commit is the analyzer's, beside the indexer's head.
    api("GET", `/repositories/${enc(repo.id)}/index/status`).then((s) => clear(cell, stateCell(s)), () => {});
  }
  return h(
    "tr",
    { "data-repo": repo.id },
    h("td", {}, h("a", { href: `/repositories/${enc(repo.id)}` }, label), h("div", { class: "muted mono" }, repo.source)),
    h("td", {}, repo.kind),
    cell,
    head,
    h("td", {}, h("div", { class: "actions" }, indexButton, deleteButton)),
  );
}

function addForm(slot, reload) {
  const kind = h("select", { name: "kind" }, h("option", { value: "path" }, "Local path"), h("option", { value: "url" }, "Git URL"), h("option", { value: "full_name" }, "Installed owner/repo"));
  const source = h("input", { type: "text", name: "source", required: true, spellcheck: "false" });
  const name = h("input", { type: "text", name: "name" });
  const submit = h("button", { type: "submit" }, "Add repository");
  return h(
    "form",
    {
      class: "panel",
      "aria-labelledby": "add-h",
      onsubmit: (event) => {
        event.preventDefault();
        act(submit, slot, async () => {
          const body = { [kind.value]: source.value.trim() };
          if (name.value.trim()) body.name = name.value.trim();
          const repo = await api("POST", "/repositories", body);
          announce(`${repo.name || repo.id} added`);
          source.value = "";
          name.value = "";
          await reload();
        });
      },
    },
    h("h2", { id: "add-h" }, "Add a repository"),
    h("div", { class: "form-row" }, field("Source", kind), field("Path, URL or owner/repo", source), field("Name (optional)", name)),
    submit,
  );
}

export default async function repositories(main) {
  document.title = "Repositories · Code Review";
  const slot = h("div", {});
  const list = h("div", {}, h("p", { class: "muted" }, "Loading…"));
  async function reload() {
    const repos = [];
    let cursor = "";
    do {
      const page = await api("GET", `/repositories?limit=200${cursor ? `&cursor=${enc(cursor)}` : ""}`);
      repos.push(...page.repositories);
      cursor = page.page?.next_cursor || "";
    } while (cursor);
    if (!repos.length) clear(list, h("p", {}, "No repositories yet: add one below."));
    else clear(list, table(["Repository", "Kind", "Index", "Head", "Actions"], repos.map((r) => row(r, slot, reload)), "Repositories"));
  }
  clear(main, h("h1", {}, "Repositories"), slot, list, addForm(slot, reload));
  await act(null, slot, reload);
}
