// The dashboard's shell: who is signed in, the router (real paths, so /account?checkout=success
// from the payment provider lands on the Account page), and the navigation.
import { configure, request } from "./api.js";
import { clear, errorBox, h } from "./ui.js";

const routes = [
  [/^\/signin$/, () => import("./pages/signin.js")],
  [/^\/(repositories)?$/, () => import("./pages/repositories.js")],
  [/^\/repositories\/([^/]+)$/, () => import("./pages/repository.js")],
  [/^\/repositories\/([^/]+)\/file$/, () => import("./pages/file.js")],
  [/^\/account$/, () => import("./pages/account.js")],
  [/^\/team$/, () => import("./pages/team.js")],
  [/^\/assistant$/, () => import("./pages/assistant.js")],
];

export const state = { session: null };

export function navigate(path, replace = false) {
  if (replace) history.replaceState({}, "", path);
  else history.pushState({}, "", path);
  render();
}

function signedOut() {
  state.session = null;
  configure("");
  if (location.pathname !== "/signin") navigate("/signin", true);
}

export async function loadSession() {
  state.session = await request("/ui/session");
  configure(state.session.csrf, signedOut);
  const signedIn = state.session.signed_in;
  document.getElementById("nav").hidden = !signedIn;
  document.getElementById("who").hidden = !signedIn;
  document.getElementById("who-login").textContent = signedIn ? `Signed in as ${state.session.principal.login}` : "";
  return state.session;
}

function markCurrent() {
  for (const link of document.querySelectorAll("nav a")) {
    const href = link.getAttribute("href");
    const current = location.pathname === href || (href !== "/" && location.pathname.startsWith(`${href}/`));
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

export async function render() {
  const main = document.getElementById("main");
  const path = location.pathname;
  if (!state.session?.signed_in && path !== "/signin") {
    navigate(`/signin`, true);
    return;
  }
  markCurrent();
  for (const [pattern, load] of routes) {
    const match = path.match(pattern);
    if (!match) continue;
    try {
      const page = await load();
      clear(main);
      await page.default(main, { params: match.slice(1).map((p) => (p ? decodeURIComponent(p) : p)), query: new URLSearchParams(location.search) });
    } catch (err) {
      clear(main, h("h1", {}, "Something went wrong"), errorBox(err));
    }
    return;
  }
  clear(main, h("h1", {}, "Not found"), h("p", {}, "No page here. ", h("a", { href: "/repositories" }, "Repositories")));
}

// Same-origin links move within the dashboard without a reload (API docs excepted).
document.addEventListener("click", (event) => {
  const link = event.target.closest("a");
  if (!link || link.hasAttribute("data-external") || link.target || event.defaultPrevented) return;
  if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const url = new URL(link.href, location.href);
  if (url.origin !== location.origin || url.pathname.startsWith("/ui/") || url.pathname.startsWith("/v1/")) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
  document.getElementById("main").focus();
});
window.addEventListener("popstate", render);

document.getElementById("signout").addEventListener("click", async () => {
  try {
    await request("/ui/session", "DELETE");
  } catch (err) {
    clear(document.getElementById("main"), errorBox(err));
    return;
  }
  await loadSession();
  navigate("/signin");
});

async function start() {
  try {
    await loadSession();
  } catch (err) {
    clear(document.getElementById("main"), h("h1", {}, "The service did not answer"), errorBox(err));
    return;
  }
  render();
}

start();
