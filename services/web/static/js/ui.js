// Small DOM helpers: elements are built with textContent only, never from HTML strings, so
// nothing the API returns can become markup.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function clear(el, ...children) {
  el.replaceChildren();
  return append(el, children);
}

// An API error as the user sees it: the message and its machine code (and HTTP status).
export function errorBox(err) {
  const code = err && err.code ? err.code : "error";
  const status = err && err.status ? ` · HTTP ${err.status}` : "";
  return h(
    "div",
    { class: "error", role: "alert" },
    h("strong", {}, "Error: "),
    err && err.message ? err.message : String(err),
    " ",
    h("span", {}, "(", h("code", { "data-code": code }, code), status, ")"),
  );
}

export function showError(slot, err) {
  clear(slot, errorBox(err));
}

export function announce(text) {
  const live = document.getElementById("live");
  if (live) live.textContent = text;
}

// Run an action from a button: disabled while it runs, the error shown in `slot`.
export async function act(button, slot, action) {
  if (slot) clear(slot);
  if (button) button.disabled = true;
  try {
    return await action();
  } catch (err) {
    if (slot) showError(slot, err);
    else throw err;
    return undefined;
  } finally {
    if (button) button.disabled = false;
  }
}

export function table(headers, rows, caption) {
  return h(
    "div",
    // Wide tables scroll inside their own box, which keyboard users must be able to reach.
    { class: "table-wrap", tabindex: "0", role: "region", "aria-label": caption || "Table" },
    h(
      "table",
      {},
      caption ? h("caption", { class: "visually-hidden" }, caption) : null,
      h("thead", {}, h("tr", {}, headers.map((text) => h("th", { scope: "col" }, text)))),
      h("tbody", {}, rows),
    ),
  );
}

export function field(labelText, input, hint) {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, labelText), input, hint ? h("div", { class: "muted" }, hint) : null);
}

export const short = (sha) => (sha ? sha.slice(0, 10) : "—");
export const pct = (x) => (x === null || x === undefined ? "—" : `${Math.round(x * 1000) / 10} %`);
export const when = (t) => (t ? new Date(t).toLocaleString() : "—");

export function badge(state) {
  return h("span", { class: `badge state-${state || "none"}` }, state || "never indexed");
}

const loaded = new Map();
// Vendored libraries load on the pages that need them (script-src 'self').
export function loadScript(src) {
  if (!loaded.has(src)) {
    loaded.set(
      src,
      new Promise((resolve, reject) => {
        const el = h("script", { src });
        el.addEventListener("load", resolve);
        el.addEventListener("error", () => reject(new Error(`could not load ${src}`)));
        document.head.append(el);
      }),
    );
  }
  return loaded.get(src);
}
