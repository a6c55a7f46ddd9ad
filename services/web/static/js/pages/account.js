import { api, enc } from "../api.js";
import { act, announce, clear, field, h, pct, table, when } from "../ui.js";

const cap = (n) => (n === -1 ? "unlimited" : n);

function usageRows(usage) {
  return Object.entries(usage).map(([metric, u]) =>
    h(
      "tr",
      {},
      h("th", { scope: "row" }, metric.replace("_", " ")),
      h("td", {}, u.used ?? "—"),
      h("td", {}, cap(u.cap)),
      h("td", {}, u.cap > 0 ? h("progress", { max: u.cap, value: Math.min(u.used || 0, u.cap), "aria-label": `${metric} used of cap` }) : "—"),
    ),
  );
}

function price(plan) {
  if (!plan.paid) return "free";
  if (!plan.price) return `price unavailable (${plan.price_unavailable || "unknown"})`;
  const p = plan.price;
  const per = p.interval ? ` / ${p.interval}` : "";
  const minor = p.unit_amount !== null && p.unit_amount !== undefined ? p.unit_amount : Number(p.unit_amount_decimal);
  try {
    // The API answers the currency's smallest unit: 500 is 5.00 USD but 500 JPY (no minor unit).
    const format = new Intl.NumberFormat(undefined, { style: "currency", currency: p.currency.toUpperCase() });
    return `${format.format(minor / 10 ** format.resolvedOptions().maximumFractionDigits)}${per}`;
  } catch {
    return `${minor} ${p.currency.toUpperCase()} (smallest unit)${per}`; // a code Intl does not know
  }
}

// The provider's hosted pages (checkout, portal) are where the user goes next.
function go(url) {
  if (url) window.location.assign(url);
}

function subscription(status, plans, slot, reload) {
  const buttons = [];
  const button = (text, action, cls = "secondary") => {
    const b = h("button", { type: "button", class: cls }, text);
    b.addEventListener("click", () => act(b, slot, action));
    buttons.push(b);
  };
  if (status.customer_linked) button("Billing portal", async () => go((await api("POST", "/account/billing-portal", {})).url));
  if (status.cancel_at_period_end) button("Reactivate", async () => (await api("POST", "/account/reactivate", {}), reload()));
  else if (status.status !== "canceled" && status.customer_linked) button("Cancel at period end", async () => (await api("POST", "/account/cancel", {}), reload()), "danger");
  const planRows = plans.plans.map((plan) => {
    const actions = h("div", { class: "actions" });
    if (plan.id !== status.plan && plan.paid && plan.price_available) {
      const checkout = h("button", { type: "button" }, status.customer_linked ? `Switch to ${plan.name}` : `Subscribe to ${plan.name}`);
      checkout.addEventListener("click", () =>
        act(checkout, slot, async () => {
          if (status.customer_linked) {
            await api("POST", "/account/switch-plan", { plan: plan.id });
            announce(`Switched to ${plan.name}`);
            await reload();
          } else go((await api("POST", "/account/checkout", { plan: plan.id })).url);
        }),
      );
      actions.append(checkout);
      if (!status.trial_used && plan.trial_days && !status.customer_linked) {
        const trial = h("button", { type: "button", class: "secondary" }, `Try ${plan.trial_days} days`);
        trial.addEventListener("click", () => act(trial, slot, async () => go((await api("POST", "/account/checkout", { plan: plan.id, trial: true })).url)));
        actions.append(trial);
      }
    }
    return h(
      "tr",
      {},
      h("th", { scope: "row" }, plan.name, plan.id === status.plan ? h("span", { class: "badge state-ready" }, " current") : null),
      h("td", {}, price(plan)),
      h("td", {}, `${cap(plan.caps.analyses)} analyses, ${cap(plan.caps.repositories)} repositories, ${cap(plan.caps.ai_tokens)} AI tokens`),
      h("td", {}, plan.max_seats === -1 ? "unlimited" : plan.max_seats),
      h("td", {}, actions),
    );
  });
  return [
    h(
      "div",
      { class: "grid" },
      h(
        "div",
        { class: "panel" },
        h("h2", {}, "Plan"),
        h("p", {}, h("strong", {}, status.plan_name), ` · status ${status.status || "none"}`, status.effective_plan !== status.plan ? ` (limits of ${status.effective_plan})` : ""),
        h("p", { class: "muted" }, `Seats ${status.seats} · period ends ${when(status.current_period_end || status.period_end)}`, status.cancel_at_period_end ? " · cancels at period end" : ""),
        h("div", { class: "actions" }, buttons),
      ),
      h("div", { class: "panel" }, h("h2", {}, "Usage this period"), table(["Metric", "Used", "Cap", ""], usageRows(status.usage), "Usage against caps")),
    ),
    h("h2", {}, "Plans"),
    table(["Plan", "Price", "Caps", "Seats", ""], planRows, "Plans"),
  ];
}

// `created` outlives the list's redraws: the new secret stays on screen until the page is left.
function tokens(list, slot, reload, created) {
  const name = h("input", { type: "text", name: "token-name", required: true, maxlength: 100 });
  const days = h("input", { type: "number", name: "token-days", min: 0, max: 3650, value: 90 });
  const submit = h("button", { type: "submit" }, "Create token");
  const form = h(
    "form",
    {
      class: "inline",
      onsubmit: (event) => {
        event.preventDefault();
        act(submit, slot, async () => {
          const made = await api("POST", "/account/tokens", { name: name.value.trim(), expires_in_days: Number(days.value || 0) });
          const copy = h("button", { type: "button", class: "secondary" }, "Copy");
          copy.addEventListener("click", async () => {
            try {
              await navigator.clipboard.writeText(made.secret);
              copy.textContent = "Copied";
            } catch {
              copy.textContent = "Select and copy by hand";
            }
          });
          clear(
            created,
            h("div", { class: "notice", role: "status" }, h("p", {}, h("strong", {}, `Token “${made.token.name}” created.`), " Copy it now: it is shown only once."), h("div", { class: "secret" }, h("code", { id: "new-secret" }, made.secret), copy)),
          );
          name.value = "";
          await reload(false);
        });
      },
    },
    field("Name", name),
    field("Expires in days (0 = never)", days),
    submit,
  );
  const rows = list.tokens.map((t) => {
    const revoke = h("button", { type: "button", class: "danger", "aria-label": `Revoke ${t.name}` }, "Revoke");
    revoke.addEventListener("click", () => {
      if (!window.confirm(`Revoke ${t.name}? Scripts using it stop working at once.`)) return;
      act(revoke, slot, async () => {
        await api("DELETE", `/account/tokens/${enc(t.id)}`);
        announce(`${t.name} revoked`);
        await reload(false);
      });
    });
    return h("tr", { "data-token": t.name }, h("td", {}, t.name), h("td", {}, h("code", {}, `${t.prefix}…`)), h("td", {}, when(t.created_at)), h("td", {}, t.expires_at ? when(t.expires_at) : "never"), h("td", {}, when(t.last_used_at)), h("td", {}, revoke));
  });
  return [h("h2", { id: "tokens-h" }, "Personal access tokens"), form, rows.length ? table(["Name", "Prefix", "Created", "Expires", "Last used", ""], rows, "Personal access tokens") : h("p", {}, "No tokens yet.")];
}

const FAMILIES = ["naming", "vocabulary", "formatting", "dependencies", "structure", "documentation", "idioms", "cochange", "external"];

function preferences(prefs, slot, reload) {
  const severity = h("select", { name: "min_severity" }, ["info", "warning", "error"].map((s) => h("option", { value: s, selected: s === prefs.min_severity }, s)));
  const confidence = h("input", { type: "number", name: "min_confidence", min: 0, max: 1, step: 0.05, value: prefs.min_confidence });
  const ignored = h("textarea", { name: "ignored_paths" }, (prefs.ignored_paths || []).join("\n"));
  const disabled = h("textarea", { name: "disabled_rules" }, (prefs.disabled_rules || []).join("\n"));
  const enabled = new Set(prefs.enabled_families?.length ? prefs.enabled_families : FAMILIES);
  const boxes = FAMILIES.map((f) => h("label", { class: "check" }, h("input", { type: "checkbox", value: f, checked: enabled.has(f) }), ` ${f}`));
  const submit = h("button", { type: "submit" }, "Save preferences");
  const lines = (el) => el.value.split("\n").map((s) => s.trim()).filter(Boolean);
  return h(
    "form",
    {
      class: "panel",
      onsubmit: (event) => {
        event.preventDefault();
        act(submit, slot, async () => {
          const families = boxes.map((b) => b.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
          await api("PATCH", "/account/audit-preferences", { min_severity: severity.value, min_confidence: Number(confidence.value), ignored_paths: lines(ignored), disabled_rules: lines(disabled), enabled_families: families });
          announce("Preferences saved");
          await reload(false);
        });
      },
    },
    h("h2", {}, "Audit preferences"),
    h("fieldset", {}, h("legend", {}, "Rule families"), h("div", { class: "actions" }, boxes)),
    field("Minimum severity", severity),
    field("Minimum confidence (0–1)", confidence),
    field("Ignored paths (one glob a line)", ignored),
    field("Disabled rules (one a line)", disabled),
    h("p", { class: "muted" }, prefs.updated_at ? `Updated ${when(prefs.updated_at)}` : "Defaults apply."),
    submit,
  );
}

function audits(results) {
  const fleet = results.fleet;
  return [
    h("h2", {}, "Audit results"),
    h("p", {}, `${fleet.repositories} repositories (${fleet.learned} learned), ${fleet.audits} audits in ${fleet.window_days} days, false-positive rate ${pct(fleet.false_positive_rate)}.`),
    fleet.conventions.length
      ? table(["Rule", "Language", "Repositories", "Majority", "Agreement"], fleet.conventions.slice(0, 20).map((c) => h("tr", {}, h("td", {}, c.rule), h("td", {}, c.language || "—"), h("td", {}, c.repositories), h("td", {}, c.majority), h("td", {}, pct(c.agreement)))), "Fleet-wide conventions")
      : null,
    results.audits.length
      ? table(["When", "Repository", "Kind", "Files", "Findings"], results.audits.slice(0, 20).map((a) => h("tr", {}, h("td", {}, when(a.created_at)), h("td", {}, h("a", { href: `/repositories/${enc(a.repository_id)}` }, a.repository_id)), h("td", {}, a.kind, a.pr_number ? ` #${a.pr_number}` : ""), h("td", {}, a.files), h("td", {}, a.findings))), "Recent audits")
      : h("p", { class: "muted" }, "No audits yet."),
  ];
}

export default async function account(main, { query }) {
  document.title = "Account · Code Review";
  const slot = h("div", {});
  const top = h("section", { "aria-label": "Subscription" });
  const tokenSection = h("section", { "aria-labelledby": "tokens-h" });
  const created = h("div", { "aria-live": "polite" });
  const prefsSection = h("section", { "aria-label": "Audit preferences" });
  const auditSection = h("section", { "aria-label": "Audit results" });
  const note = query.get("checkout") ? h("div", { class: "notice", role: "status" }, query.get("checkout") === "success" ? "Checkout complete: the plan applies as soon as the payment provider confirms it." : "Checkout canceled.") : null;
  clear(main, h("h1", {}, "Account"), note, slot, top, created, tokenSection, prefsSection, auditSection);
  async function reload(all = true) {
    const [list, prefs] = await Promise.all([api("GET", "/account/tokens"), api("GET", "/account/audit-preferences")]);
    clear(tokenSection, tokens(list, slot, reload, created));
    clear(prefsSection, preferences(prefs, slot, reload));
    if (all) {
      const [status, plans] = await Promise.all([api("GET", "/account/status"), api("GET", "/account/plans")]);
      clear(top, subscription(status, plans, slot, reload));
      clear(auditSection, audits(await api("GET", "/audit-results")));
    }
  }
  await act(null, slot, reload);
}
