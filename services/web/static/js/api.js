// The dashboard's one way to the public /v1 API: /ui/api/* carries the session cookie (which
// scripts cannot read) and the CSRF token; every error comes back as an ApiError with the
// body's message and code.
let csrf = "";
let onSignedOut = () => {};

export function configure(token, signedOut) {
  csrf = token || "";
  onSignedOut = signedOut || onSignedOut;
}

export class ApiError extends Error {
  constructor(status, code, message, details) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details || {};
  }
}

async function parse(reply) {
  if (reply.status === 204) return null;
  let body = null;
  try {
    body = await reply.json();
  } catch {
    body = null;
  }
  if (!reply.ok) {
    const code = (body && body.code) || `http_${reply.status}`;
    const message = (body && body.error) || reply.statusText || "request failed";
    throw new ApiError(reply.status, code, message, body && body.details);
  }
  return body;
}

export async function request(url, method = "GET", body = undefined) {
  const headers = { accept: "application/json" };
  if (method !== "GET") headers["x-csrf-token"] = csrf;
  const init = { method, headers, credentials: "same-origin" };
  if (body !== undefined) {
    headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let reply;
  try {
    reply = await fetch(url, init);
  } catch (err) {
    throw new ApiError(0, "network_error", `the service did not answer: ${err.message}`);
  }
  return parse(reply);
}

// A /v1 call: api("GET", "/repositories") reaches GET /v1/repositories.
export async function api(method, path, body) {
  try {
    return await request(`/ui/api${path}`, method, body);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) onSignedOut(err);
    throw err;
  }
}

export const enc = encodeURIComponent;
