/**
 * The endpoint of a provider whose address the user supplies (Azure AI Foundry: each resource has
 * its own; a custom OpenAI-compatible server): which providers need one, where a configured one is
 * found, and the check and normalisation of a typed or pasted address before anything is sent to it.
 */

import type { HermesConfig } from "../config/defaults.js";
import { findProvider } from "./providers.js";

export type EndpointCheck =
  | {
      ok: true;
      /** The base URL to store: no trailing slash, no query, the path the provider's API lives under. */
      url: string;
      /** What was changed from the input, said to the user; absent when it was used as given. */
      note?: string;
      /** An Azure deployment name found in a pasted request URL (`/openai/deployments/<name>/…`). */
      deployment?: string;
    }
  | { ok: false; message: string };

/** Azure hosts whose OpenAI-compatible v1 API lives under `/openai/v1`. */
const AZURE_HOST = /\.(openai\.azure\.com|cognitiveservices\.azure\.com|services\.ai\.azure\.com)$/i;

/** Request paths people paste along with the base URL. */
const OPERATION_SUFFIX = /\/(chat\/completions|completions|responses|models|embeddings)$/i;

/** The catalog id for a provider name or alias (`azure` → `azure-foundry`), else the name as given. */
function canonical(provider: string): string {
  return findProvider(provider)?.id ?? provider.toLowerCase();
}

/**
 * True for a provider whose catalog entry has no address of its own: the user must give one
 * (azure-foundry). `custom` and the local-server aliases are asked for theirs as servers.
 */
export function needsEndpoint(provider: string): boolean {
  const profile = findProvider(provider);
  return profile !== undefined && profile.id !== "custom" && profile.baseUrl === "";
}

/** An example address for the prompt and for messages. */
export function endpointExample(provider: string): string {
  return canonical(provider) === "azure-foundry"
    ? "https://<resource>.openai.azure.com/openai/v1 (or https://<resource>.services.ai.azure.com/openai/v1)"
    : "http://127.0.0.1:8080/v1";
}

/** The variable that carries the provider's endpoint in `.env` or the environment, if any. */
export function endpointVariable(provider: string): string | undefined {
  const profile = findProvider(provider);
  return profile?.baseUrlEnv?.[0];
}

/**
 * The endpoint already configured for `provider`: config.yaml's `model.base_url` when config.yaml
 * names the same provider, else the provider's own variable (`AZURE_FOUNDRY_BASE_URL`).
 */
export function configuredEndpoint(
  provider: string,
  config: HermesConfig,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const configured = config.model.provider.trim();
  if (configured && canonical(configured) === canonical(provider) && config.model.base_url.trim()) {
    return config.model.base_url.trim();
  }
  for (const name of findProvider(provider)?.baseUrlEnv ?? []) {
    const value = env[name]?.trim();
    if (value) return value;
  }
  return undefined;
}

function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h.endsWith(".localhost") || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}

/**
 * Checks an address typed for `provider` and gives the form to store. Every provider: an http(s)
 * URL with a host, no user name or password in it, no spaces; a pasted request URL loses its
 * operation (`/chat/completions`) and trailing slash. Providers that take a key (azure-foundry)
 * need https unless the host is this machine, so the key never crosses a network in clear text.
 * Azure hosts: the query (`?api-version=…`) is dropped and the path becomes `/openai/v1`, the
 * resource's OpenAI-compatible API, from the bare resource URL, a project URL
 * (`/api/projects/<name>`), the model-inference URL (`/models`) or a deployment's request URL,
 * whose deployment name is returned as the suggested model.
 */
export function normaliseEndpoint(provider: string, input: string): EndpointCheck {
  const id = canonical(provider);
  let text = input.trim();
  if (text === "") return { ok: false, message: "No address given." };
  // A key pasted at the address question is not repeated on the screen.
  if (/^[\w-]{20,}$/.test(text) && !text.includes(".")) {
    return {
      ok: false,
      message: "That looks like a key, not an address; the key is asked after the address.",
    };
  }
  if (/\s/.test(text)) return { ok: false, message: `"${text}" has spaces in it; an address has none.` };
  const bareHost = /^[a-z0-9.-]+\.[a-z]{2,}(:\d+)?(\/.*)?$/i.test(text);
  let added = false;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text) && bareHost && id === "azure-foundry") {
    text = `https://${text}`;
    added = true;
  }
  if (!/^[a-z][a-z0-9+.-]*:/i.test(text) || /^[a-z0-9.-]+:\d/i.test(text)) {
    return {
      ok: false,
      message: `"${text}" needs http:// or https:// in front, e.g. ${endpointExample(id)}`,
    };
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, message: `"${input.trim()}" is not a URL, e.g. ${endpointExample(id)}` };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return { ok: false, message: `"${input.trim()}" is not an http(s) URL, e.g. ${endpointExample(id)}` };
  }
  if (!url.hostname) return { ok: false, message: `"${input.trim()}" has no host.` };
  if (url.username || url.password) {
    return {
      ok: false,
      message:
        "The address has a user name or password in it; give the address alone (the key is asked next).",
    };
  }
  const keyed = findProvider(id)?.keyOptional === false;
  if (url.protocol === "http:" && keyed && !isLoopback(url.hostname)) {
    return {
      ok: false,
      message:
        `http:// would send your key unencrypted to ${url.hostname}; use https://${url.host}${url.pathname === "/" ? "" : url.pathname}` +
        " (plain http is accepted only for this machine: localhost, 127.0.0.1).",
    };
  }
  const notes: string[] = added ? ["https:// added"] : [];
  let path = url.pathname.replace(/\/+$/, "");
  let deployment: string | undefined;
  if (id === "azure-foundry" && AZURE_HOST.test(url.hostname)) {
    if (url.search) notes.push(`${url.search} dropped`);
    const deployed = /^\/openai\/deployments\/([^/]+)/i.exec(path);
    if (deployed?.[1]) {
      deployment = decodeURIComponent(deployed[1]);
      path = "/openai/v1";
    }
    path = path.replace(OPERATION_SUFFIX, "");
    if (path === "" || /^\/openai$/i.test(path) || /^\/api\/projects(\/|$)/i.test(path)) path = "/openai/v1";
    if (path !== url.pathname.replace(/\/+$/, "")) notes.push(`the API path is ${path}`);
    return {
      ok: true,
      url: `${url.protocol}//${url.host}${path}`,
      ...(notes.length > 0 ? { note: notes.join("; ") } : {}),
      ...(deployment ? { deployment } : {}),
    };
  }
  if (url.search || url.hash) {
    return {
      ok: false,
      message: `Give the base address without "${url.search}${url.hash}", e.g. ${endpointExample(id)}`,
    };
  }
  const trimmed = path.replace(OPERATION_SUFFIX, "");
  if (trimmed !== path) notes.push(`${path.slice(trimmed.length)} dropped: the base address is wanted`);
  return {
    ok: true,
    url: `${url.protocol}//${url.host}${trimmed}`,
    ...(notes.length > 0 ? { note: notes.join("; ") } : {}),
  };
}
