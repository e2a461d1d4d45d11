/**
 * Google Vertex AI (`vertex`): Gemini and partner models through Vertex's OpenAI-compatible
 * chat-completions endpoint, and Claude models (`claude-…@date`, or `anthropic/claude-…`) over
 * Anthropic's Messages wire at the publisher endpoint (vertex-claude.ts), both authenticated with
 * Google credentials (oauth/google-auth.ts) instead of a key. This module decides the settings a run uses, synchronously and without the network:
 * which credential file, which project and region, and the base URL they give.
 *
 * Precedence, as upstream Hermes reads them: the project is `VERTEX_PROJECT_ID`, else
 * `vertex.project_id` in config.yaml, else the key file's own (`project_id`, or gcloud's
 * `quota_project_id`), else `GOOGLE_CLOUD_PROJECT` / `GCLOUD_PROJECT`; the region is
 * `VERTEX_REGION`, else `vertex.region`, else "global". The host is Google's for the region, or
 * `HERMES_VERTEX_BASE_URL` (scheme and host of a proxy or a test server; https or loopback), and a
 * `model.base_url` the user set for vertex is used as it is.
 */
import { existsSync } from "node:fs";
import type { Redactor } from "../util/redact.js";
import {
  type CredentialLocation,
  checkSecureUrl,
  type Env,
  findCredentialFile,
  GoogleAuthError,
  readCredentialFileSync,
} from "./oauth/google-auth.js";

/** What a resolved vertex runtime carries besides its base URL. No secret is held here. */
export interface VertexSettings {
  credentials: CredentialLocation;
  kind: "service_account" | "authorized_user" | "metadata";
  /** The service account's email; undefined for a gcloud user login and the metadata server. */
  account: string | undefined;
  /**
   * Undefined only when the credentials come from the metadata server and nothing names a
   * project: the transport asks the server before the first call (base URLs hold
   * `METADATA_PROJECT` until then).
   */
  projectId: string | undefined;
  /** Where the project id came from, for status lines. */
  projectFrom: string;
  region: string;
  /** `HERMES_GOOGLE_TOKEN_URL` as it was when resolved (a gcloud login's token endpoint). */
  tokenUrlOverride?: string | undefined;
}

export const VERTEX_DEFAULT_REGION = "global";

/** The project segment of a base URL whose project the metadata server will name. */
export const METADATA_PROJECT = "{metadata-project-id}";

/** `url` with the metadata server's project in place of `METADATA_PROJECT`. */
export function withVertexProject(url: string, projectId: string): string {
  return url.replace(`/projects/${METADATA_PROJECT}/`, `/projects/${projectId}/`);
}

/**
 * Models Vertex serves (it has no listing for either surface): Gemini over the OpenAI-compatible
 * endpoint, Claude over Anthropic's Messages wire at the publisher endpoint (`name@date` ids).
 */
export const VERTEX_MODELS: readonly string[] = [
  "google/gemini-2.5-pro",
  "google/gemini-2.5-flash",
  "google/gemini-2.5-flash-lite",
  "google/gemini-2.0-flash-001",
  "claude-sonnet-4-5@20250929",
  "claude-haiku-4-5@20251001",
  "claude-opus-4-1@20250805",
  "claude-sonnet-4@20250514",
];

// Google's rules: 6-30 characters, lower-case letters, digits and hyphens, starting with a letter;
// older projects may carry a domain prefix (`example.com:my-project`); numbers name projects too.
const PROJECT_ID = /^(?:[a-z0-9.-]+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$|^\d{6,20}$/;
// `global`, the `us` and `eu` multi-regions, or a region such as us-central1 / europe-west4.
const REGION = /^(?:global|us|eu|[a-z]+-[a-z]+\d{1,2})$/;

/** A vertex setting that is missing or wrong: one line, naming the fix. */
export class VertexConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "VertexConfigError";
  }
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** A project id as Google spells them, or the reason it is not one. */
export function projectIdProblem(id: string): string | undefined {
  return PROJECT_ID.test(id)
    ? undefined
    : `"${id}" is not a Google Cloud project id (6-30 lower-case letters, digits and hyphens, e.g. my-project-123)`;
}

/** A Vertex location, or the reason it is not one. */
export function regionProblem(region: string): string | undefined {
  return REGION.test(region)
    ? undefined
    : `"${region}" is not a Vertex AI location (global, us, eu, or a region such as us-central1, europe-west4)`;
}

/** Google's host for a location: the global endpoint, a multi-region's, or the region's own. */
export function vertexHost(region: string): string {
  if (region === "global") return "https://aiplatform.googleapis.com";
  if (region === "us" || region === "eu") return `https://aiplatform.${region}.rep.googleapis.com`;
  return `https://${region}-aiplatform.googleapis.com`;
}

/** The OpenAI-compatible base URL for a project and location under `host`. */
export function vertexBaseUrl(projectId: string, region: string, host = vertexHost(region)): string {
  return `${host.replace(/\/+$/, "")}/v1beta1/projects/${projectId}/locations/${region}/endpoints/openapi`;
}

/** The Messages API base of a project's Claude models (vertex-claude.ts appends `/models/M:…`). */
export function vertexClaudeBaseUrl(projectId: string, region: string, host = vertexHost(region)): string {
  return `${host.replace(/\/+$/, "")}/v1/projects/${projectId}/locations/${region}/publishers/anthropic`;
}

/** A Claude model (`claude-…`, or `anthropic/claude-…`): Vertex serves it over Anthropic's wire. */
export function isVertexClaude(model: string): boolean {
  return /^(?:anthropic\/)?claude-/i.test(model.trim());
}

/**
 * The model id the endpoint wants: a Gemini model named bare (`gemini-2.5-flash`) gets its
 * publisher (`google/`), which Vertex's OpenAI surface requires; a Claude model loses an
 * `anthropic/` prefix (its publisher is in the URL); anything else is left as written.
 */
export function vertexModelId(model: string): string {
  const trimmed = model.trim();
  if (isVertexClaude(trimmed)) return trimmed.replace(/^anthropic\//i, "");
  return /^gemini-/i.test(trimmed) ? `google/${trimmed}` : trimmed;
}

function section(config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const value = config["vertex"];
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/**
 * The settings of a vertex run, read from the environment, config.yaml and the credential file.
 * Registers the file's secrets with `redactor`. Throws `VertexConfigError` with one line naming the
 * fix: no credentials, an unreadable or broken file, no or a malformed project id, a bad region.
 */
export function resolveVertexSettings(input: {
  env: Env;
  config: Readonly<Record<string, unknown>>;
  homedir?: string | undefined;
  redactor?: Redactor | undefined;
}): VertexSettings {
  const { env } = input;
  const vertex = section(input.config);
  let location: CredentialLocation | undefined;
  let credential: ReturnType<typeof readCredentialFileSync>;
  try {
    location = findCredentialFile(env, { homedir: input.homedir, exists: existsSync });
    if (!location) {
      throw new VertexConfigError(
        "vertex: no Google credentials found (VERTEX_CREDENTIALS_PATH, GOOGLE_APPLICATION_CREDENTIALS, gcloud ADC; " +
          "not on Google Cloud, so no metadata server): " +
          "run hermes setup model and give your service-account key file, or run gcloud auth application-default login",
      );
    }
    credential = readCredentialFileSync(location, env, input.redactor);
  } catch (error) {
    if (error instanceof GoogleAuthError) throw new VertexConfigError(`vertex: ${error.message}`);
    throw error;
  }

  const candidates: Array<[string | undefined, string]> = [
    [text(env["VERTEX_PROJECT_ID"]), "VERTEX_PROJECT_ID"],
    [text(vertex["project_id"]), "vertex.project_id"],
    [credential.projectId, credential.type === "service_account" ? "the key file" : "gcloud's quota project"],
    [text(env["GOOGLE_CLOUD_PROJECT"]), "GOOGLE_CLOUD_PROJECT"],
    [text(env["GCLOUD_PROJECT"]), "GCLOUD_PROJECT"],
  ];
  const chosen =
    candidates.find(([value]) => value !== undefined) ??
    (credential.type === "metadata" ? [undefined, "the metadata server"] : undefined);
  if (!chosen) {
    throw new VertexConfigError(
      "vertex: no Google Cloud project id: run hermes config set vertex.project_id <project> (or set VERTEX_PROJECT_ID in .env)",
    );
  }
  const [projectId, projectFrom] = chosen;
  const badProject = projectId === undefined ? undefined : projectIdProblem(projectId);
  if (badProject) {
    throw new VertexConfigError(
      `vertex: ${projectFrom} ${badProject}: run hermes config set vertex.project_id <project>`,
    );
  }

  const regionFrom = text(env["VERTEX_REGION"]) ? "VERTEX_REGION" : "vertex.region";
  const region = (
    text(env["VERTEX_REGION"]) ??
    text(vertex["region"]) ??
    VERTEX_DEFAULT_REGION
  ).toLowerCase();
  const badRegion = regionProblem(region);
  if (badRegion) {
    throw new VertexConfigError(
      `vertex: ${regionFrom} ${badRegion}: run hermes config set vertex.region global`,
    );
  }
  return {
    credentials: location,
    kind: credential.type,
    account: credential.type === "service_account" ? credential.clientEmail : undefined,
    projectId,
    projectFrom,
    region,
    ...(text(env["HERMES_GOOGLE_TOKEN_URL"])
      ? { tokenUrlOverride: text(env["HERMES_GOOGLE_TOKEN_URL"]) }
      : {}),
  };
}

/**
 * The base URL of a vertex run: `explicit` (model.base_url or --base-url) as written, else the
 * project's endpoint under `HERMES_VERTEX_BASE_URL` or Google's host for the region: the
 * OpenAI-compatible one, or for a Claude `model` the Anthropic publisher's.
 */
export function resolveVertexBaseUrl(
  settings: VertexSettings,
  env: Env,
  explicit: string | undefined,
  model = "",
): string {
  // The bearer is a Google Cloud token: it goes only over https, or to this machine.
  if (explicit) return secure(explicit, "model.base_url for vertex");
  const override = text(env["HERMES_VERTEX_BASE_URL"]);
  if (override) secure(override, "HERMES_VERTEX_BASE_URL");
  return isVertexClaude(model)
    ? vertexClaudeBaseUrl(settings.projectId ?? METADATA_PROJECT, settings.region, override)
    : vertexBaseUrl(settings.projectId ?? METADATA_PROJECT, settings.region, override);
}

function secure(url: string, what: string): string {
  try {
    return checkSecureUrl(url, what);
  } catch (error) {
    throw new VertexConfigError(`vertex: ${(error as Error).message}`);
  }
}

/** Status lines for a vertex runtime: how it signs in, the project and the location. */
export function vertexFacts(settings: VertexSettings): Array<[string, string]> {
  const who =
    settings.kind === "service_account"
      ? `service account ${settings.account ?? "(unknown)"} (${settings.credentials.origin} ${settings.credentials.path})`
      : settings.kind === "metadata"
        ? `this machine's service account (metadata server ${settings.credentials.path})`
        : `gcloud user login (${settings.credentials.origin === "gcloud ADC" ? "" : `${settings.credentials.origin} `}${settings.credentials.path})`;
  return [
    ["Google auth", who],
    [
      "Project",
      settings.projectId === undefined
        ? "asked of the metadata server at the first call"
        : `${settings.projectId} (from ${settings.projectFrom})`,
    ],
    ["Region", settings.region],
  ];
}
