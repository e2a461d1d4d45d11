/**
 * Claude on Google Vertex AI: the Anthropic Messages wire (transports/anthropic-messages.ts) sent
 * to Vertex's publisher endpoints. The transport posts to `<base>/v1/messages` as it does for
 * Anthropic; the fetch this module wraps around it moves that request to where Vertex serves the
 * model and into the body shape Vertex takes:
 *
 *   POST <base>/v1/messages  {"model":"claude-sonnet-4-5@20250929","stream":true,...}
 *   → POST <base>/models/claude-sonnet-4-5@20250929:streamRawPredict
 *        {"anthropic_version":"vertex-2023-10-16","stream":true,...}   (no `model`)
 *
 * `:rawPredict` when the body does not ask to stream. `<base>` is the project's
 * `…/v1/projects/P/locations/L/publishers/anthropic` (vertex.ts builds it). The bearer is a Google
 * access token, set by the transport's `authToken`; this module handles no credential.
 */

/** The Messages API version Vertex wants in the body (its own name for the 2023-06-01 API). */
export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

const MESSAGES_SUFFIX = "/v1/messages";

/** The Vertex URL and body for a Messages API request, or undefined when it is not one to move. */
export function vertexClaudeRequest(
  url: string,
  body: string,
): { url: string; body: string; model: string; streaming: boolean } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (!parsed.pathname.endsWith(MESSAGES_SUFFIX)) return undefined;
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const { model, ...rest } = data as Record<string, unknown>;
  if (typeof model !== "string" || model.trim() === "") return undefined;
  const streaming = rest["stream"] === true;
  const prefix = parsed.pathname.slice(0, -MESSAGES_SUFFIX.length);
  // The model id goes into the path as one segment (`@` and `.` are legal there, `/` is not).
  const id = encodeURIComponent(model.trim()).replace(/%40/g, "@");
  parsed.pathname = `${prefix}/models/${id}:${streaming ? "streamRawPredict" : "rawPredict"}`;
  parsed.searchParams.delete("beta");
  const shaped = { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest };
  return { url: parsed.toString(), body: JSON.stringify(shaped), model, streaming };
}

/**
 * A fetch that sends Messages API requests to Vertex's Claude endpoints and passes anything else
 * through untouched.
 */
export function vertexClaudeFetch(inner: typeof fetch): typeof fetch {
  const wrapped = async (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<Response> => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.toString() : input.url;
    const body = typeof init?.body === "string" ? init.body : undefined;
    const moved =
      body !== undefined && (init?.method ?? "GET").toUpperCase() === "POST"
        ? vertexClaudeRequest(url, body)
        : undefined;
    if (!moved) return inner(input, init);
    return inner(moved.url, { ...init, body: moved.body });
  };
  return wrapped as typeof fetch;
}
