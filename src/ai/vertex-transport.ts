/**
 * The transport of a `vertex` run: before each model call it asks the credential's token source
 * for an access token (renewed five minutes before it expires) and rebuilds the wire client
 * (chat completions, or Anthropic Messages for Claude) when the token changed; with credentials
 * from the metadata server and no project named, it first asks the server for the project.
 * When Vertex answers 401 before anything streamed, the token is renewed once and the call
 * repeated; a second refusal, or a 403/404, ends the call with a one-line error naming the
 * project, the location and what to check.
 */
import { abortable } from "../util/abortable.js";
import { httpFetch } from "../util/http-fetch.js";
import { processRedactor } from "../util/redact.js";
import {
  type Env,
  GoogleAuthError,
  type GoogleToken,
  GoogleTokenSource,
  metadataProject,
  readCredentialFile,
  type TokenDeps,
} from "./oauth/google-auth.js";
import { streamRenewingOnce } from "./oauth/transport.js";
import { type ApiMode, type ChatRequest, ProviderError, type StreamEvent, type Transport } from "./types.js";
import { isVertexClaude, projectIdProblem, type VertexSettings } from "./vertex.js";

/** One token source per credential file and process, shared by the main, auxiliary and fallback calls. */
const SOURCES = new Map<string, GoogleTokenSource>();

/**
 * The token source for `settings`' credential file. The file is read again whenever a token is
 * needed, so a replaced key counts without a restart; its secrets go to the process redactor.
 */
export function vertexTokenSource(
  settings: VertexSettings,
  deps: Partial<TokenDeps> = {},
): GoogleTokenSource {
  const key = `${settings.credentials.origin}\0${settings.credentials.path}\0${settings.tokenUrlOverride ?? ""}`;
  const custom = deps.fetch !== undefined || deps.now !== undefined || deps.timeoutMs !== undefined;
  const existing = custom ? undefined : SOURCES.get(key);
  if (existing) return existing;
  const env: Env = settings.tokenUrlOverride ? { HERMES_GOOGLE_TOKEN_URL: settings.tokenUrlOverride } : {};
  const source = new GoogleTokenSource(
    () => readCredentialFile(settings.credentials, env, processRedactor()),
    {
      fetch: deps.fetch ?? (httpFetch as typeof fetch),
      now: deps.now ?? Date.now,
      timeoutMs: deps.timeoutMs,
    },
  );
  if (!custom) SOURCES.set(key, source);
  return source;
}

export interface VertexTransportOptions {
  /** `chat_completions` (Gemini and the OpenAI-compatible surface) or `anthropic_messages` (Claude). */
  apiMode?: ApiMode | undefined;
  settings: VertexSettings;
  baseUrl: string;
  model: string;
  source: Pick<GoogleTokenSource, "current">;
  /**
   * The project, asked once before the first call when `settings.projectId` is undefined (the
   * metadata server's own). Default: `vertexMetadataProject(settings)`.
   */
  project?: (() => Promise<string>) | undefined;
  /** The wire transport sending `token` as its bearer, to `settings`' project. */
  build: (token: GoogleToken, settings: VertexSettings & { projectId: string }) => Promise<Transport>;
}

export function createVertexTransport(options: VertexTransportOptions): Transport {
  const { baseUrl } = options;
  let settings = options.settings;
  let built: { token: string; transport: Transport } | undefined;

  const transportFor = async (force: boolean, signal: AbortSignal | undefined): Promise<Transport> => {
    let token: GoogleToken;
    let projectId = settings.projectId;
    try {
      const pending = options.source.current(
        force ? { force, ...(built ? { stale: built.token } : {}) } : {},
      );
      token = await untilAborted(pending, signal);
      if (projectId === undefined) {
        const asked = (options.project ?? (() => vertexMetadataProject(settings)))();
        projectId = await untilAborted(asked, signal);
        settings = { ...settings, projectId };
      }
    } catch (error) {
      throw tokenFailure(error, baseUrl);
    }
    if (built?.token !== token.accessToken) {
      built = { token: token.accessToken, transport: await options.build(token, { ...settings, projectId }) };
    }
    return built.transport;
  };

  return {
    apiMode: options.apiMode ?? "chat_completions",
    stream(request: ChatRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
      return streamRenewingOnce(
        () => transportFor(false, signal),
        () => transportFor(true, signal),
        request,
        signal,
        (error) => explained(error, settings, request.model || options.model),
      );
    },
  };
}

/** The project each metadata server named, asked once per process. */
const PROJECTS = new Map<string, Promise<string>>();

/** The project of the machine whose metadata server `settings` names (asked once, kept). */
export function vertexMetadataProject(
  settings: VertexSettings,
  deps: Partial<TokenDeps> = {},
): Promise<string> {
  const root = settings.credentials.path;
  const ask = async () => {
    const id = await metadataProject(
      { type: "metadata", root, projectId: undefined },
      {
        fetch: deps.fetch ?? (httpFetch as typeof fetch),
        now: deps.now ?? Date.now,
        timeoutMs: deps.timeoutMs,
      },
    );
    // It goes into the URL: what the server says must be a project id, not a path.
    const problem = projectIdProblem(id);
    if (problem) {
      throw new GoogleAuthError(
        `the metadata server at ${root} named ${problem}: run hermes config set vertex.project_id <project>`,
      );
    }
    return id;
  };
  if (deps.fetch !== undefined) return ask();
  let pending = PROJECTS.get(root);
  if (!pending) {
    pending = ask();
    PROJECTS.set(root, pending);
    // A failure is not kept: the next call asks again.
    pending.catch(() => PROJECTS.delete(root));
  }
  return pending;
}

/**
 * `promise`, or the signal's reason as soon as it aborts: an interrupt does not wait for a slow
 * token endpoint (the request goes on, and its token is kept for the next call).
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  return signal ? abortable(promise, signal) : promise;
}

/** A token that could not be had, as the error the classifier and the user understand. */
function tokenFailure(error: unknown, baseUrl: string): unknown {
  if (!(error instanceof GoogleAuthError)) return error;
  return new ProviderError(`vertex: ${error.message}`, {
    // A refused credential is an authentication failure (no retry); an unreachable endpoint is not.
    status: error.transient ? undefined : 401,
    transport: error.transient,
    baseUrl,
    cause: error,
  });
}

/** What Vertex said, in one line, with what to check for the statuses a setting causes. */
function explained(error: ProviderError, settings: VertexSettings, model: string): ProviderError {
  const who =
    settings.account ??
    (settings.kind === "metadata" ? "this machine's service account" : "your gcloud account");
  const where = `project ${settings.projectId} (location ${settings.region})`;
  const first = error.message.split("\n")[0] ?? "";
  // The wire's wording names the URL and status again; Vertex's own words are what is new.
  const said = /answered with HTTP \d+: (.*)$/.exec(first)?.[1] ?? first;
  let fix: string | undefined;
  if (error.status === 401) {
    fix = `Vertex AI refused a freshly issued token for ${where}: give ${who} the role roles/aiplatform.user there`;
  } else if (error.status === 403) {
    fix = `Vertex AI denied access to ${where}: check vertex.project_id, that the Vertex AI API is enabled there and that ${who} has roles/aiplatform.user`;
  } else if (error.status === 404) {
    fix = isVertexClaude(model)
      ? `Vertex AI found no ${model} in ${where}: check the model id (e.g. claude-sonnet-4-5@20250929), that it is enabled in Model Garden and offered in vertex.region`
      : `Vertex AI found no ${model} in ${where}: check the model id (e.g. google/gemini-2.5-flash) and vertex.region`;
  }
  if (!fix) return error;
  return new ProviderError(`${fix} (HTTP ${error.status}: ${said})`, {
    status: error.status,
    body: error.body,
    baseUrl: error.baseUrl,
    headers: error.headers,
    cause: error,
  });
}

/**
 * The doctor's check of a vertex runtime: a token is issued for its credentials. Returns the
 * failure's one line, or undefined when the token came.
 */
export async function vertexTokenProblem(
  settings: VertexSettings,
  deps: Partial<TokenDeps> = {},
): Promise<string | undefined> {
  try {
    await vertexTokenSource(settings, deps).current();
    return undefined;
  } catch (error) {
    if (error instanceof GoogleAuthError) return error.message;
    throw error;
  }
}
