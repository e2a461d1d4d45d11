/**
 * Transport for the AWS Bedrock Converse API (`api_mode: bedrock_converse`) over the official
 * `@aws-sdk/client-bedrock-runtime`: `ConverseStream` by default, `Converse` when streaming is off.
 * The SDK is required on first use, not at module load, because this module sits on the CLI's
 * start-up path. SDK retries are off (`maxAttempts: 1`): retry policy belongs to the caller,
 * driven by `ProviderError`'s fields.
 *
 * Request conversion lives in `bedrock-convert.ts`, response assembly in `bedrock-assembler.ts`;
 * this module is the `WireProtocol` the one transport skeleton (`wire.ts`) runs.
 */
import { createRequire } from "node:module";
import type { BedrockRuntimeClient } from "@aws-sdk/client-bedrock-runtime";
import type { ChatRequest, StreamEvent, Transport } from "../types.js";
import { BedrockAssembler, streamException } from "./bedrock-assembler.js";
import { type BedrockGuardrail, buildConverseRequest } from "./bedrock-convert.js";
import { DEFAULT_STALL_MS } from "./stall.js";
import { createWireTransport, type WireReader } from "./wire.js";
import {
  answeredWith,
  couldNotConnect,
  describe,
  failedMidResponse,
  firstLine,
  headerRecord,
  type WireFailure,
} from "./wire-failure.js";
import { asRecord } from "./wire-values.js";

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

interface BedrockClient {
  client: BedrockRuntimeClient;
  sdk: Sdk;
}

/** A transport speaking Bedrock Converse. Creating it loads nothing; the SDK loads on first stream. */
export function createBedrockTransport(options: BedrockTransportOptions = {}): Transport {
  const region = resolveRegion(options);
  const endpoint = endpointFor(options.baseUrl);
  /** Where requests go, for messages and the classifier. */
  const baseUrl = endpoint ?? `https://bedrock-runtime.${region}.amazonaws.com`;
  const input = (request: ChatRequest) =>
    buildConverseRequest(request, {
      promptCaching: options.promptCaching ?? true,
      guardrail: options.guardrail,
    });
  return createWireTransport<BedrockClient>({
    apiMode: "bedrock_converse",
    baseUrl,
    streaming: options.stream ?? true,
    stallMs: options.stallTimeoutMs ?? DEFAULT_STALL_MS,
    finishMarker: "no messageStop",
    createClient: async () => {
      const sdk = await loadSdk();
      return { sdk, client: makeClient(sdk, options, region, endpoint) };
    },
    reader: () => new BedrockReader(baseUrl),
    openStream: async ({ client, sdk }, request, { signal }) => {
      const command = new sdk.bedrock.ConverseStreamCommand(input(request) as never);
      const output = await client.send(command, { abortSignal: signal });
      // No event stream at all reads as a stream that ended before messageStop.
      return output.stream ?? noEvents();
    },
    fullCall: ({ client, sdk }, request, { signal }) =>
      client.send(new sdk.bedrock.ConverseCommand(input(request) as never), { abortSignal: signal }),
    readError: (err) => readBedrockError(err, baseUrl),
  });
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

/** Reads one Converse response through the assembler. */
class BedrockReader implements WireReader {
  private readonly assembler = new BedrockAssembler();

  constructor(private readonly baseUrl: string) {}

  get hasContent(): boolean {
    return this.assembler.hasContent;
  }

  get finished(): boolean {
    return this.assembler.finished;
  }

  event(raw: unknown): StreamEvent[] | WireFailure {
    // The SDK yields exception members as events instead of throwing them.
    const exception = streamException(raw);
    return exception ? exceptionFailure(exception, this.baseUrl) : this.assembler.addEvent(raw);
  }

  response(output: unknown): StreamEvent[] {
    return this.assembler.addOutput(output);
  }

  finishFailure(): WireFailure | undefined {
    if (this.assembler.finishReason !== "error") return undefined;
    const message = `The model stopped with ${this.assembler.rawStopReason}: Bedrock could not parse what it wrote.`;
    return exceptionFailure({ type: "ModelErrorException", message }, this.baseUrl, false);
  }

  finishEvents(): StreamEvent[] {
    return this.assembler.finishEvents();
  }
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

/**
 * A Bedrock exception reported inside a 200 (an exception event, or a stop reason that stands for
 * one), with the status the same exception has as an HTTP answer.
 */
function exceptionFailure(
  exception: { type: string; message: string },
  baseUrl: string,
  withStatus = true,
): WireFailure {
  const status = withStatus ? EXCEPTION_STATUS[exception.type.toLowerCase()] : undefined;
  return answeredWith(baseUrl, {
    status,
    body: JSON.stringify({ __type: exception.type, message: exception.message }),
    detail: `${exception.type}: ${exception.message}`,
    where: "mid-stream",
  });
}

/** What an error the AWS SDK threw means. */
function readBedrockError(err: unknown, baseUrl: string): WireFailure {
  const e = asRecord(err) ?? {};
  const name = typeof e["name"] === "string" ? e["name"] : "Error";
  const message = typeof e["message"] === "string" ? e["message"] : String(err);
  // The socket timeout (`timeoutMs`).
  if (name === "TimeoutError" || e["code"] === "ETIMEDOUT") {
    return {
      message: `The request to ${baseUrl} timed out: Bedrock sent no data within the request timeout, so it was aborted.`,
      transport: true,
      cause: err,
    };
  }
  if (name === "CredentialsProviderError" || name === "TokenProviderError") {
    return {
      message: `No AWS credentials for Bedrock: ${message}. Set AWS_PROFILE (run \`aws sso login\` first for SSO), AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK.`,
      body: JSON.stringify({ __type: name, message }),
      cause: err,
    };
  }
  const http = asRecord(e["$metadata"])?.["httpStatusCode"];
  const httpStatus = typeof http === "number" ? http : undefined;
  if (e["$fault"] !== undefined || (httpStatus !== undefined && httpStatus >= 400)) {
    // A service exception: an HTTP error, or (with no status) an exception frame mid-stream.
    const isHttp = httpStatus !== undefined && httpStatus >= 400;
    return answeredWith(baseUrl, {
      status: isHttp ? httpStatus : EXCEPTION_STATUS[name.toLowerCase()],
      body: JSON.stringify({ __type: name, message }),
      detail: `${name}: ${message}`,
      ...(httpStatus === undefined ? { where: "mid-stream" } : {}),
      headers: headerRecord(asRecord(e["$response"])?.["headers"]),
      cause: err,
    });
  }
  if (httpStatus !== undefined) {
    // A 2xx answer the SDK could not read: a body cut short, or not Bedrock's JSON at all. The SDK
    // error is not kept as the cause: its 200 status would read as an HTTP answer to the classifier.
    return {
      message: `The response from ${baseUrl} could not be read (${firstLine(message)}); the connection probably dropped.`,
      transport: true,
    };
  }
  const code = typeof e["code"] === "string" ? e["code"] : "";
  if (CONNECT_CODES.has(code)) {
    return couldNotConnect(baseUrl, err, {
      timedOut: false,
      detail: describe(err),
      hint: "Is the endpoint (or region) right and reachable?",
    });
  }
  // Anything else is the wire failing: ECONNRESET ("aborted"), a socket hang-up, a frame cut short.
  return failedMidResponse(baseUrl, err);
}

/** Connection errors that mean the request never reached Bedrock. */
const CONNECT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

async function* noEvents(): AsyncGenerator<never> {}

function hostOf(url: string | undefined): string | undefined {
  if (!url?.trim()) return undefined;
  try {
    return new URL(url.trim()).hostname;
  } catch {
    return undefined;
  }
}
