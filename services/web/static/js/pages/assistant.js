import { api } from "../api.js";
import { state } from "../app.js";
import { act, append, clear, field, h } from "../ui.js";

export default async function assistant(main) {
  document.title = "Assistant · Code Review";
  clear(main, h("h1", {}, "Assistant"));
  if (!state.session?.assistant) {
    main.append(h("div", { class: "notice", role: "status" }, "The assistant needs an AI upstream, and this installation has none configured (CR_GATEWAY_AI_UPSTREAM_URL)."));
    return;
  }
  const slot = h("div", {});
  const log = h("div", { class: "chat-log", role: "log", "aria-label": "Conversation", "aria-live": "polite" });
  const input = h("textarea", { name: "message", required: true });
  const send = h("button", { type: "submit" }, "Send");
  const messages = [];
  const form = h(
    "form",
    {
      onsubmit: (event) => {
        event.preventDefault();
        const text = input.value.trim();
        if (!text) return;
        act(send, slot, async () => {
          messages.push({ role: "user", content: text });
          append(log, [h("p", {}, h("strong", {}, "You: "), text)]);
          input.value = "";
          const reply = await api("POST", "/ai/chat", { messages });
          const answer = reply.choices?.[0]?.message?.content || "";
          messages.push({ role: "assistant", content: answer });
          append(log, [h("p", {}, h("strong", {}, "Assistant: "), answer)]);
        });
      },
    },
    field("Message", input),
    send,
  );
  append(main, [h("p", { class: "muted" }, "Questions go to the configured AI upstream through /v1/ai/chat; usage counts against your plan's AI tokens."), slot, log, form]);
}
