import { api, enc } from "../api.js";
import { state } from "../app.js";
import { act, announce, clear, field, h, table, when } from "../ui.js";

const ROLES = ["viewer", "member", "team-admin"];

function roleSelect(value, label) {
  const select = h("select", { "aria-label": label }, ROLES.map((r) => h("option", { value: r, selected: r === value }, r)));
  return select;
}

async function adminView(section, org, slot) {
  const list = await api("GET", `/teams/${enc(org.org_id)}/members`);
  const reload = () => adminView(section, org, slot);
  const rows = list.members.map((m) => {
    const role = roleSelect(m.role, `Role of ${m.login}`);
    role.addEventListener("change", () =>
      act(role, slot, async () => {
        await api("PATCH", `/teams/${enc(org.org_id)}/members/${enc(m.id)}/role`, { role: role.value });
        announce(`${m.login} is now ${role.value}`);
      }),
    );
    const remove = h("button", { type: "button", class: "danger", "aria-label": `Remove ${m.login}` }, "Remove");
    remove.addEventListener("click", () => {
      if (!window.confirm(`Remove ${m.login} from ${org.org_name}?`)) return;
      act(remove, slot, async () => (await api("DELETE", `/teams/${enc(org.org_id)}/members/${enc(m.id)}`), reload()));
    });
    return h("tr", { "data-member": m.login }, h("td", {}, m.login), h("td", {}, m.email || "—"), h("td", {}, role), h("td", {}, m.status), h("td", {}, when(m.joined_at)), h("td", {}, remove));
  });
  const login = h("input", { type: "text", name: "login", required: true });
  const inviteRole = roleSelect("member", "Role of the invitee");
  const invite = h("button", { type: "submit" }, "Invite");
  const seats = h("input", { type: "number", name: "seats", min: 1, value: list.seats });
  const seatsButton = h("button", { type: "submit", class: "secondary" }, "Change seats");
  clear(
    section,
    h("h2", {}, org.org_name),
    h("p", {}, `${list.members.length} of ${list.seats} seats used · you are ${org.role}`),
    table(["Login", "Email", "Role", "Status", "Since", ""], rows, `Members of ${org.org_name}`),
    h(
      "form",
      { class: "inline", onsubmit: (e) => (e.preventDefault(), act(invite, slot, async () => (await api("POST", `/teams/${enc(org.org_id)}/invite`, { login: login.value.trim(), role: inviteRole.value }), announce(`${login.value} invited`), reload()))) },
      field("Invite (code-host login)", login),
      field("Role", inviteRole),
      invite,
    ),
    h("form", { class: "inline", onsubmit: (e) => (e.preventDefault(), act(seatsButton, slot, async () => (await api("POST", `/teams/${enc(org.org_id)}/seats`, { seats: Number(seats.value) }), reload()))) }, field("Seats", seats), seatsButton),
  );
}

export default async function team(main) {
  document.title = "Team · Code Review";
  const slot = h("div", {});
  const memberships = state.session?.principal?.memberships || [];
  clear(main, h("h1", {}, "Team"), slot);
  if (!memberships.length) {
    main.append(h("p", {}, "You belong to no organization."));
    return;
  }
  for (const org of memberships) {
    const section = h("section", { class: "panel", "data-org": org.org_id });
    main.append(section);
    if (org.role === "team-admin") await act(null, slot, () => adminView(section, org, slot));
    else clear(section, h("h2", {}, org.org_name), h("p", {}, `You are ${org.role} here. Members, invitations, roles and seats are managed by the organization's team-admins.`));
  }
}
