import { request } from "../api.js";
import { loadSession, navigate, state } from "../app.js";
import { act, clear, errorBox, field, h } from "../ui.js";

export default async function signin(main, { query }) {
  if (state.session?.signed_in) {
    navigate("/repositories", true);
    return;
  }
  document.title = "Sign in · Code Review";
  const slot = h("div", {});
  if (query.get("error")) slot.append(errorBox({ message: query.get("error"), code: query.get("code") || "oauth_failed" }));
  const token = h("input", { type: "password", name: "token", autocomplete: "off", required: true, spellcheck: "false" });
  const submit = h("button", { type: "submit" }, "Sign in");
  const form = h(
    "form",
    {
      onsubmit: async (event) => {
        event.preventDefault();
        await act(submit, slot, async () => {
          await request("/ui/session", "POST", { token: token.value.trim() });
          await loadSession();
          navigate("/repositories");
        });
      },
    },
    field("Personal access token", token, "A crp_… token: from `codereview admin create-user`, or the Account page."),
    submit,
  );
  clear(
    main,
    h("h1", {}, "Sign in"),
    slot,
    h(
      "div",
      { class: "grid" },
      h("section", { class: "panel", "aria-labelledby": "host-h" }, h("h2", { id: "host-h" }, "With your code host"), h("p", {}, "Sign in with the code host account your organization uses."), h("a", { class: "button", href: "/ui/oauth/start", "data-external": true }, "Sign in with GitHub")),
      h("section", { class: "panel", "aria-labelledby": "pat-h" }, h("h2", { id: "pat-h" }, "With a token"), form),
    ),
  );
  token.focus();
}
