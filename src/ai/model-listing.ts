/**
 * A provider's own model list (`GET <base>/models`), and with it the answer to "is this endpoint
 * reachable and is its key accepted". `hermes setup` and `hermes model` list models from it;
 * `hermes doctor` probes each configured provider with it. No retries: the caller shows the reason.
 */
import { contextLengthFromListing } from "./model-metadata.js";
import { keyHeaders } from "./providers.js";
import type { AcpLaunch } from "./transports/acp-launch.js";
import type { ApiMode } from "./types.js";

/** One model as the endpoint lists it. */
export interface ListedModel {
  id: string;
  /** The context window the listing states, when it does. */
  contextLength?: number;
}

/** Why a listing failed: nothing answered, the key was refused, or any other error status/body. */
export type ListingFailureKind = "unreachable" | "auth" | "http" | "unsupported";

export type ModelListing =
  | { ok: true; models: ListedModel[] }
  | { ok: false; kind: ListingFailureKind; status?: number; message: string };

export interface ListModelsInput {
  baseUrl: string;
  apiKey?: string | undefined;
  /** The header carrying the key instead of a bearer (the runtime's `apiKeyHeader`). */
  apiKeyHeader?: string | undefined;
  apiMode: ApiMode;
  timeoutMs?: number;
  fetch?: typeof fetch;
  /** `copilot-acp`: the CLI to ask (the runtime's `acp`); its models come from an ACP session. */
  acp?: AcpLaunch | undefined;
  /** The environment the CLI is started with (without Hermes's secrets), for `acp`. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

function headersFor(input: ListModelsInput): Record<string, string> {
  if (!input.apiKey) return {};
  if (input.apiMode === "anthropic_messages") {
    return { "x-api-key": input.apiKey, "anthropic-version": "2023-06-01" };
  }
  return keyHeaders(input.apiKey, input.apiKeyHeader);
}

/** The ids (and windows) in a listing body: OpenAI's and Anthropic's `{data: [{id}]}`, Ollama's `{models: [{name}]}`. */
export function modelsFromListing(body: unknown): ListedModel[] | undefined {
  const record = body as { data?: unknown; models?: unknown } | null;
  const rows = Array.isArray(record?.data)
    ? record.data
    : Array.isArray(record?.models)
      ? record.models
      : undefined;
  if (!rows) return undefined;
  const models: ListedModel[] = [];
  for (const row of rows) {
    if (typeof row !== "object" || row === null) continue;
    const entry = row as Record<string, unknown>;
    const id =
      typeof entry["id"] === "string" ? entry["id"] : typeof entry["name"] === "string" ? entry["name"] : "";
    if (!id) continue;
    const contextLength = contextLengthFromListing({ data: [entry] }, id);
    models.push(contextLength === undefined ? { id } : { id, contextLength });
  }
  return models;
}

/** Lists the endpoint's models. Never throws: a failure says what went wrong. */
export async function listModels(input: ListModelsInput): Promise<ModelListing> {
  if (input.apiMode === "bedrock_converse") {
    return {
      ok: false,
      kind: "unsupported",
      message: "Bedrock has no /models listing; models come from the catalog",
    };
  }
  if (input.baseUrl.startsWith("acp://")) return listFromAcp(input);
  const url = `${input.baseUrl.replace(/\/+$/, "")}/models`;
  const doFetch = input.fetch ?? fetch;
  let response: Response;
  try {
    response = await doFetch(url, {
      headers: headersFor(input),
      signal: AbortSignal.timeout(input.timeoutMs ?? 5000),
    });
  } catch (error) {
    const reason =
      error instanceof Error
        ? error.cause instanceof Error
          ? error.cause.message
          : error.message
        : String(error);
    return { ok: false, kind: "unreachable", message: `${url} did not answer: ${reason}` };
  }
  if (response.status === 401 || response.status === 403) {
    await response.body?.cancel().catch(() => undefined);
    return {
      ok: false,
      kind: "auth",
      status: response.status,
      message: `${url} refused the key (HTTP ${response.status})`,
    };
  }
  if (!response.ok) {
    const text = (await response.text().catch(() => "")).slice(0, 200);
    return {
      ok: false,
      kind: "http",
      status: response.status,
      message: `${url} answered HTTP ${response.status}${text ? `: ${text}` : ""}`,
    };
  }
  const body: unknown = await response.json().catch(() => undefined);
  const models = modelsFromListing(body);
  if (!models)
    return {
      ok: false,
      kind: "http",
      status: response.status,
      message: `${url} did not return a model list`,
    };
  return { ok: true, models };
}

/** The Copilot CLI's models (ACP), or why they could not be had. */
async function listFromAcp(input: ListModelsInput): Promise<ModelListing> {
  if (!input.acp) {
    return {
      ok: false,
      kind: "unsupported",
      message: `${input.baseUrl} is the Copilot CLI, not an HTTP endpoint`,
    };
  }
  try {
    const { listAcpModels } = await import("./transports/acp-provider.js");
    const ids = await listAcpModels({
      launch: input.acp,
      env: input.env ?? process.env,
      baseUrl: input.baseUrl,
      timeoutMs: Math.max(input.timeoutMs ?? 0, 15_000),
    });
    return { ok: true, models: ids.map((id) => ({ id })) };
  } catch (error) {
    return {
      ok: false,
      kind: "unreachable",
      message: `${input.acp.command} (ACP) did not list its models: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
