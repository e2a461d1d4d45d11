/**
 * Transport for the AWS Bedrock Converse API (`api_mode: bedrock_converse`) over the official
 * `@aws-sdk/client-bedrock-runtime`: `ConverseStream` by default, `Converse` when streaming is off.
 * The SDK is required on first use, not at module load, because this module sits on the CLI's
 * start-up path. SDK retries are off (`maxAttempts: 1`): retry policy belongs to the caller,
 * driven by `ProviderError`'s fields.
 *
 * Request conversion lives in `bedrock-convert.ts`, response assembly in `bedrock-assembler.ts`.
 */
import { createRequire } from "node:module";
import type { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import { type ChatRequest, ProviderError, type StreamEvent, type Transport } from "../types.js";
import { BedrockAssembler, streamException } from "./bedrock-assembler.js";
import { type BedrockGuardrail, buildConverseRequest } from "./bedrock-convert.js";
import { abortError, parseRetryAfter } from "./chat-completions.js";
import { DEFAULT_STALL_MS, StallError, stallSeconds, withinStall } from "./stall.js";

export type { BedrockGuardrail } from "./bedrock-convert.js";

type BedrockModule = typeof import("@aws-sdk/client-bedrock-runtime");
/** The part of `@smithy/node-http-handler` used here (it comes with the Bedrock client). */
interface HttpHandlerModule {
  NodeHttpHandler: new (options: { connectionTimeout?: number; socketTimeout?: number }) => unknown;
}
interface Sdk {
  bedrock: BedrockModule;
  http: HttpHandlerModule;
}

export interface BedrockTransportOptions {
  /**
   * AWS region. When absent: the region in a `baseUrl` host (`bedrock-runtime.<region>.amazonaws.com`),
   * then `AWS_REGION` / `AWS_DEFAULT_REGION` from `env`, then `us-east-1`.
   */
  region?: string | undefined;
  /**
   * The runtime endpoint. The standard AWS host only sets the region (the SDK resolves the endpoint,
   * FIPS and dual-stack included); any other URL (a VPC endpoint, a proxy, a local fake) becomes
   * the SDK's `endpoint`.
   */
  baseUrl?: string | undefined;
  /**
   * Where credentials come from, in this order: `AWS_BEARER_TOKEN_BEDROCK` (a Bedrock API key, sent
   * as `Authorization: Bearer`, as the AWS SDKs themselves prefer it), then
   * `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`) as static SigV4
   * credentials, else the SDK's default chain with `AWS_PROFILE` (SSO, credential files, process,
   * container and instance roles). Defaults to `process.env`.
   */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** ConverseStream (default) or one Converse call whose output is replayed as the same events. */
  stream?: boolean | undefined;
  /** Abort when the socket sends nothing for this long (default 10 minutes; 0 turns it off). */
  timeoutMs?: number | undefined;
  /**
   * A streamed request that gets no response, no first event or no next event for this long is
   * cut as stalled (`agent.stream_stall_timeout`; default 60 000 ms, 0 never).
   */
  stallTimeoutMs?: number | undefined;
  /** Extra HTTP headers on every request (signed along with the rest under SigV4). */
  headers?: Record<string, string> | undefined;
  /** Prompt-cache checkpoints (system + last 3 messages) on Claude models. Default true. */
  promptCaching?: boolean | undefined;
  /** A Bedrock guardrail to apply (`bedrock.guardrail` in config.yaml). */
  guardrail?: BedrockGuardrail | undefined;
}

type Env = Readonly<Record<string, string | undefined>>;

const DEFAULT_REGION = "us-east-1";
const DEFAULT_TIMEOUT_MS = 10 * 60_000;
const CONNECT_TIMEOUT_MS = 30_000;
const STANDARD_HOST = /^bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/i;
const REGION_IN_HOST = /(?:^|\.)bedrock-runtime(?:-fips)?\.([a-z]{2}(?:-[a-z]+)+-\d+)\./i;

let sdkPromise: Promise<Sdk> | undefined;

/**
 * Required from node_modules (the SDK is external to the CLI bundle, which only Bedrock users
 * should pay for); `require` rather than `import()` because the bundle runs in a vm.Script. The
 * HTTP handler is resolved from the client's own location, so it is the version it was built with.
 */
function loadSdk(): Promise<Sdk> {
  sdkPromise ??= new Promise<Sdk>((resolve) => {
    const require = createRequire(import.meta.url);
    const bedrock = require("@aws-sdk/client-bedrock-runtime") as BedrockModule;
    const fromClient = createRequire(require.resolve("@aws-sdk/client-bedrock-runtime"));
    resolve({ bedrock, http: fromClient("@smithy/node-http-handler") as HttpHandlerModule });
  }).catch((err: unknown) => {
    sdkPromise = undefined;
    throw err;
  });
  return sdkPromise;
}

/** The region to call: the option, the `baseUrl` host's region, the environment, then us-east-1. */
export function resolveRegion(options: Pick<BedrockTransportOptions, "region" | "baseUrl" | "env">): string {
  const explicit = options.region?.trim();
  if (explicit) return explicit;
  const host = hostOf(options.baseUrl);
  const fromHost = host ? REGION_IN_HOST.exec(host)?.[1] : undefined;
  if (fromHost) return fromHost.toLowerCase();
  const env = options.env ?? process.env;
  return env["AWS_REGION"]?.trim() || env["AWS_DEFAULT_REGION"]?.trim() || DEFAULT_REGION;
}

/** The SDK `endpoint` for a base URL; undefined for none or the standard AWS host. */
export function endpointFor(baseUrl: string | undefined): string | undefined {
  const trimmed = baseUrl?.trim().replace(/\/+$/, "");
  if (!trimmed) return undefined;
  const host = hostOf(trimmed);
  return host && STANDARD_HOST.test(host) ? undefined : trimmed;
}

export type BedrockAuth =
  | { kind: "bearer"; token: string }
  | { kind: "static"; accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  | { kind: "chain"; profile?: string };

/** Which credential the transport will use for this environment (see `BedrockTransportOptions.env`). */
export function bedrockAuth(env: Env): BedrockAuth {
  const get = (name: string) => env[name]?.trim() || undefined;
  const token = get("AWS_BEARER_TOKEN_BEDROCK");
  if (token) return { kind: "bearer", token };
  const accessKeyId = get("AWS_ACCESS_KEY_ID");
  const secretAccessKey = get("AWS_SECRET_ACCESS_KEY");
  if (accessKeyId && secretAccessKey) {
    const sessionToken = get("AWS_SESSION_TOKEN");
    return { kind: "static", accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  }
  const profile = get("AWS_PROFILE");
  return { kind: "chain", ...(profile ? { profile } : {}) };
}

interface Ctx {
  getClient: () => Promise<{ client: BedrockRuntimeClient; sdk: Sdk }>;
  options: BedrockTransportOptions;
  /** Where requests go, for messages and the classifier. */
  label: string;
}

/** A transport speaking Bedrock Converse. Creating it loads nothing; the SDK loads on first stream. */
export function createBedrockTransport(options: BedrockTransportOptions = {}): Transport {
  const region = resolveRegion(options);
  const endpoint = endpointFor(options.baseUrl);
  let clientPromise: Promise<{ client: BedrockRuntimeClient; sdk: Sdk }> | undefined;
  const ctx: Ctx = {
    options,
    label: endpoint ?? `https://bedrock-runtime.${region}.amazonaws.com`,
    getClient: () => {
      clientPromise ??= loadSdk()
        .then((sdk) => ({ sdk, client: makeClient(sdk, options, region, endpoint) }))
        .catch((err: unknown) => {
          clientPromise = undefined;
          throw err;
        });
      return clientPromise;
    },
  };
  return { apiMode: "bedrock_converse", stream: (request, signal) => runRequest(ctx, request, signal) };
}

function makeClient(
  sdk: Sdk,
  options: BedrockTransportOptions,
  region: string,
  endpoint: string | undefined,
): BedrockRuntimeClient {
  const env = options.env ?? process.env;
  const auth = bedrockAuth(env);
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const credentials =
    auth.kind === "bearer"
      ? { token: { token: auth.token }, authSchemePreference: ["httpBearerAuth"] }
      : auth.kind === "static"
        ? {
            credentials: {
              accessKeyId: auth.accessKeyId,
              secretAccessKey: auth.secretAccessKey,
              ...(auth.sessionToken ? { sessionToken: auth.sessionToken } : {}),
            },
            authSchemePreference: ["sigv4"],
          }
        : { ...(auth.profile ? { profile: auth.profile } : {}), authSchemePreference: ["sigv4"] };
  const client = quietly(
    () =>
      new sdk.bedrock.BedrockRuntimeClient({
        region,
        ...(endpoint ? { endpoint } : {}),
        ...credentials,
        maxAttempts: 1,
        retryMode: "standard",
        // HTTP/1.1: the SDK's default HTTP/2 handler is only needed for bidirectional streams, and
        // proxies and local endpoints speak HTTP/1.1.
        requestHandler: new sdk.http.NodeHttpHandler({
          ...(timeout > 0 ? { socketTimeout: timeout } : {}),
          connectionTimeout: timeout > 0 ? Math.min(timeout, CONNECT_TIMEOUT_MS) : CONNECT_TIMEOUT_MS,
        }) as never,
      }),
  );
  const headers = options.headers ?? {};
  if (Object.keys(headers).length > 0) {
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers?: Record<string, string> };
        if (request.headers) Object.assign(request.headers, headers);
        return next(args);
      },
      { step: "build", name: "hermesExtraHeaders" },
    );
  }
  return client;
}

/**
 * Runs `make` with the SDK's Node-version notice turned off: on Node 20 it prints a warning about
 * future SDK releases to stderr, across the user's output, about nothing they can act on here.
 */
function quietly<T>(make: () => T): T {
  const key = "AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED";
  const before = process.env[key];
  process.env[key] = "true";
  try {
    return make();
  } finally {
    if (before === undefined) delete process.env[key];
    else process.env[key] = before;
  }
}

async function* runRequest(
  ctx: Ctx,
  request: ChatRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamEvent> {
  if (signal?.aborted) throw abortError(signal);
  const { options, label } = ctx;
  const { client, sdk } = await ctx.getClient();
  const streaming = options.stream ?? true;
  const input = buildConverseRequest(request, {
    promptCaching: options.promptCaching ?? true,
    guardrail: options.guardrail,
  });
  const assembler = new BedrockAssembler();
  const sendOptions = signal ? { abortSignal: signal } : {};
  const stallMs = options.stallTimeoutMs ?? DEFAULT_STALL_MS;
  // One controller for the caller's abort and the stall watchdog (streaming only).
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    if (streaming) {
      const command = new sdk.bedrock.ConverseStreamCommand(input as never);
      const output = await withinStall(
        client.send(command, { abortSignal: controller.signal }),
        stallMs,
        controller,
      );
      if (!output.stream)
        throw new ProviderError(`${label} answered without an event stream.`, { transport: true });
      const iterator = output.stream[Symbol.asyncIterator]();
      while (true) {
        const next = await withinStall(Promise.resolve(iterator.next()), stallMs, controller);
        if (next.done) break;
        const event = next.value;
        const exception = streamException(event);
        if (exception) throw inStreamError(exception, label, assembler.hasContent);
        yield* assembler.addEvent(event);
        if (signal?.aborted) throw abortError(signal);
      }
    } else {
      const output = await client.send(new sdk.bedrock.ConverseCommand(input as never), sendOptions);
      yield* assembler.addOutput(output);
    }
  } catch (err) {
    if (err instanceof StallError && !signal?.aborted) {
      throw Object.assign(
        new ProviderError(
          `${assembler.hasContent ? `The stream from ${label} stalled: no data for ${stallSeconds(err.ms)} mid-answer` : `${label} sent no response within ${stallSeconds(err.ms)}`}, so the request was cut (agent.stream_stall_timeout).`,
          { transport: true, partial: assembler.hasContent, stalled: true, cause: err },
        ),
        { baseUrl: label },
      );
    }
    const error = toProviderError(err, label, signal, assembler.hasContent);
    // The classifier reads `baseUrl` to tell providers apart.
    throw error instanceof ProviderError ? Object.assign(error, { baseUrl: label }) : error;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
  if (signal?.aborted) throw abortError(signal);
  if (!assembler.finished) {
    throw Object.assign(
      new ProviderError(
        `The stream from ${label} ended before the model finished its answer (no messageStop); the connection probably dropped.`,
        { transport: true, partial: assembler.hasContent },
      ),
      { baseUrl: label },
    );
  }
  if (assembler.finishReason === "error") {
    const name = "ModelErrorException";
    const message = `The model stopped with ${assembler.rawStopReason}: Bedrock could not parse what it wrote.`;
    throw Object.assign(
      new ProviderError(`Bedrock at ${label} reported ${name}: ${message}`, {
        body: JSON.stringify({ __type: name, message }),
        partial: assembler.hasContent,
      }),
      { baseUrl: label },
    );
  }
  yield* assembler.finishEvents();
}

/**
 * HTTP statuses for Bedrock's exception types, for exceptions that arrive inside a 200 event
 * stream (which have no status of their own), so the retry policy treats them alike.
 */
const EXCEPTION_STATUS: Readonly<Record<string, number>> = {
  validationexception: 400,
  accessdeniedexception: 403,
  resourcenotfoundexception: 404,
  modeltimeoutexception: 408,
  modelerrorexception: 424,
  modelstreamerrorexception: 424,
  throttlingexception: 429,
  servicequotaexceededexception: 429,
  modelnotreadyexception: 429,
  internalserverexception: 500,
  serviceunavailableexception: 503,
};

/** An exception event the SDK yielded instead of throwing. */
function inStreamError(exception: { type: string; message: string }, label: string, partial: boolean) {
  const status = EXCEPTION_STATUS[exception.type.toLowerCase()];
  return new ProviderError(
    `Bedrock at ${label} reported ${exception.type} mid-stream: ${clip(exception.message, 500)}`,
    {
      ...(status !== undefined ? { status } : {}),
      body: JSON.stringify({ __type: exception.type, message: exception.message }),
      partial,
    },
  );
}

function toProviderError(
  err: unknown,
  label: string,
  signal: AbortSignal | undefined,
  partial: boolean,
): Error {
  if (signal?.aborted) return abortError(signal);
  if (err instanceof ProviderError) return err;
  const e = (typeof err === "object" && err !== null ? err : {}) as Record<string, unknown>;
  const name = typeof e["name"] === "string" ? e["name"] : "Error";
  const message = typeof e["message"] === "string" ? e["message"] : String(err);
  if (name === "AbortError") return abortError(signal ?? AbortSignal.abort());
  if (name === "TimeoutError" || e["code"] === "ETIMEDOUT") {
    return new ProviderError(
      partial
        ? `The stream from ${label} stalled: no data within the timeout, so the request was aborted.`
        : `The request to ${label} timed out before Bedrock answered.`,
      { transport: true, partial, cause: err },
    );
  }
  if (name === "CredentialsProviderError" || name === "TokenProviderError") {
    return new ProviderError(
      `No AWS credentials for Bedrock: ${message}. Set AWS_PROFILE (run \`aws sso login\` first for SSO), AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK.`,
      { body: JSON.stringify({ __type: name, message }), cause: err },
    );
  }
  const http = (e["$metadata"] as { httpStatusCode?: number } | undefined)?.httpStatusCode;
  if (e["$fault"] !== undefined || (http !== undefined && http >= 400)) {
    // A service exception: an HTTP error, or (with no status) an exception frame mid-stream.
    const status = http !== undefined && http >= 400 ? http : EXCEPTION_STATUS[name.toLowerCase()];
    const headers = headerRecord(e["$response"]);
    const retryAfterMs = headers ? parseRetryAfter({ get: (h) => headers[h] ?? null }) : undefined;
    const where = http === undefined ? "mid-stream" : `with HTTP ${http}`;
    const error = new ProviderError(`Bedrock at ${label} answered ${where}: ${name}: ${clip(message, 500)}`, {
      ...(status !== undefined ? { status } : {}),
      body: JSON.stringify({ __type: name, message }),
      partial,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      cause: err,
    });
    return headers ? Object.assign(error, { headers }) : error;
  }
  if (http !== undefined) {
    // A 2xx answer the SDK could not read: a body cut short, or not Bedrock's JSON at all. The SDK
    // error is not kept as the cause: its 200 status would read as an HTTP answer to the classifier.
    return new ProviderError(
      `The response from ${label} could not be read (${firstLine(message)}); the connection probably dropped.`,
      { transport: true, partial },
    );
  }
  const code = typeof e["code"] === "string" ? e["code"] : "";
  if (!partial && ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"].includes(code)) {
    return new ProviderError(
      `Could not connect to ${label}: ${describe(err)}. Is the endpoint (or region) right and reachable?`,
      { transport: true, cause: err },
    );
  }
  // Anything else is the wire failing: ECONNRESET ("aborted"), a socket hang-up, a frame cut short.
  return new ProviderError(`The connection to ${label} failed mid-response: ${describe(err)}`, {
    transport: true,
    partial,
    cause: err,
  });
}

/** The SDK's raw response headers (lower-case names), when the error kept them. */
function headerRecord(response: unknown): Record<string, string> | undefined {
  const headers = (response as { headers?: unknown } | undefined)?.headers;
  if (typeof headers !== "object" || headers === null) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers))
    if (typeof value === "string") out[key.toLowerCase()] = value;
  return Object.keys(out).length > 0 ? out : undefined;
}

function hostOf(url: string | undefined): string | undefined {
  if (!url?.trim()) return undefined;
  try {
    return new URL(url.trim()).hostname;
  } catch {
    return undefined;
  }
}

function firstLine(text: string): string {
  return text.split("\n")[0]?.trim() ?? "";
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const codeText = typeof code === "string" && !err.message.includes(code) ? ` (${code})` : "";
  const cause =
    err.cause instanceof Error && err.cause.message !== err.message ? ` (${err.cause.message})` : "";
  return `${firstLine(err.message)}${codeText}${cause}`;
}
