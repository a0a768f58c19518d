// Calls to the nara-kg API. Every call resolves to {ok, status, body}; a failure carries the
// server's one-line `error` (or says that the server did not answer).

async function call(method, path, payload) {
  const options = { method, headers: { Accept: "application/json" } };
  if (payload !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(payload);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (error) {
    return { ok: false, status: 0, body: { error: `the server did not answer (${error})` } };
  }
  let body;
  try {
    body = await response.json();
  } catch {
    body = { error: `unexpected reply from the server (HTTP ${response.status})` };
  }
  return { ok: response.ok, status: response.status, body };
}

export const api = {
  health: () => call("GET", "/api/health"),
  examples: () => call("GET", "/api/examples"),
  ask: (request) => call("POST", "/api/ask", request),
  search: (request) => call("POST", "/api/search", request),
  record: (naId) => call("GET", `/api/records/${encodeURIComponent(String(naId))}`),
};
