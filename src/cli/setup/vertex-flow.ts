/**
 * What `hermes setup` and `hermes model` ask for Google Vertex AI: the credentials (a
 * service-account key file, or gcloud's login), the project and the location. Nothing is written
 * here: the answers become `.env`'s VERTEX_CREDENTIALS_PATH and config.yaml's `vertex.project_id`
 * and `vertex.region` when the plan is applied (model-flow.ts `applyModelPlan`).
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";
import {
  type CredentialLocation,
  findCredentialFile,
  GoogleAuthError,
  type GoogleCredential,
  gcloudAdcPath,
  readCredentialFileSync,
} from "../../ai/oauth/google-auth.js";
import { projectIdProblem, regionProblem, VERTEX_DEFAULT_REGION } from "../../ai/vertex.js";
import { processRedactor } from "../../util/redact.js";
import type { Prompter } from "./prompter.js";

type Env = Readonly<Record<string, string | undefined>>;

/** The variable setup stores a key file's path in (upstream Hermes's name; it wins over GOOGLE_APPLICATION_CREDENTIALS). */
export const VERTEX_PATH_VARIABLE = "VERTEX_CREDENTIALS_PATH";

export interface VertexAnswers {
  projectId: string;
  region: string;
  /** The key file's absolute path, when one was given (for `.env`). */
  keyPath?: string;
}

function vertexSection(config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const value = config["vertex"];
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function describe(credential: GoogleCredential, location: CredentialLocation): string {
  if (credential.type === "metadata")
    return `this machine's service account (metadata server ${location.path})`;
  return credential.type === "service_account"
    ? `service account ${credential.clientEmail} (${location.origin}: ${location.path})`
    : `gcloud user login (${location.path})`;
}

function tryRead(location: CredentialLocation, env: Env): GoogleCredential | string {
  try {
    return readCredentialFileSync(location, env, processRedactor());
  } catch (error) {
    if (error instanceof GoogleAuthError) return error.message;
    throw error;
  }
}

/** `~/x` and relative paths made absolute (relative to the working directory). */
function absolutePath(answer: string, home: string): string {
  const path = answer.trim().replace(/^["']|["']$/g, "");
  if (path === "~" || path.startsWith("~/")) return resolve(home, path.slice(2));
  return isAbsolute(path) ? path : resolve(path);
}

/**
 * Asks what Vertex needs, offering what is already configured. Throws PromptCancelled when the
 * user leaves (nothing is written then).
 */
export async function askVertex(
  p: Pick<Prompter, "ask" | "say" | "confirm">,
  input: { env: Env; config: Readonly<Record<string, unknown>> },
): Promise<VertexAnswers> {
  const { env } = input;
  const userHome = str(env["HOME"]) ?? homedir();
  let credential: GoogleCredential | undefined;
  let keyPath: string | undefined;

  let found: CredentialLocation | undefined;
  try {
    found = findCredentialFile(env, { homedir: userHome, exists: existsSync });
  } catch (error) {
    if (!(error instanceof GoogleAuthError)) throw error;
    p.say(`✗ ${error.message}`);
  }
  if (found) {
    const read = tryRead(found, env);
    if (typeof read === "string") p.say(`✗ ${read}`);
    else {
      p.say(`Google credentials found: ${describe(read, found)}`);
      if (await p.confirm("Use these Google credentials?", true)) credential = read;
    }
  }
  if (!credential) {
    p.say(
      "Vertex AI signs in with a service-account key file (JSON, from IAM → Service accounts → Keys), " +
        "or with gcloud's login (gcloud auth application-default login).",
    );
  }
  while (!credential) {
    const answer = await p.ask("Path to the service-account key file (empty: use gcloud's login)");
    if (answer.trim() === "") {
      const adc = gcloudAdcPath(env, userHome);
      if (!adc || !existsSync(adc)) {
        p.say(
          `No gcloud login found${adc ? ` (${adc})` : ""}: run gcloud auth application-default login, or give a key file.`,
        );
        continue;
      }
      const read = tryRead({ path: adc, origin: "gcloud ADC" }, env);
      if (typeof read === "string") p.say(`✗ ${read}`);
      else credential = read;
      continue;
    }
    const path = absolutePath(answer, userHome);
    if (!existsSync(path)) {
      p.say(`${path} does not exist; give the path of the JSON key file.`);
      continue;
    }
    const read = tryRead({ path, origin: VERTEX_PATH_VARIABLE }, env);
    if (typeof read === "string") {
      p.say(`✗ ${read}`);
      continue;
    }
    credential = read;
    keyPath = path;
    p.say(`Using ${describe(read, { path, origin: VERTEX_PATH_VARIABLE })}.`);
  }

  const section = vertexSection(input.config);
  const envProject = str(env["VERTEX_PROJECT_ID"]);
  if (envProject) p.say(`VERTEX_PROJECT_ID is set (${envProject}); it wins over vertex.project_id.`);
  const projectFallback =
    envProject ??
    str(section["project_id"]) ??
    credential.projectId ??
    str(env["GOOGLE_CLOUD_PROJECT"]) ??
    str(env["GCLOUD_PROJECT"]);
  let projectId = "";
  for (;;) {
    projectId = (await p.ask("Google Cloud project id (vertex.project_id)", projectFallback)).trim();
    const problem = projectId ? projectIdProblem(projectId) : "a project id is needed";
    if (!problem) break;
    p.say(problem);
  }

  const regionFallback = str(env["VERTEX_REGION"]) ?? str(section["region"]) ?? VERTEX_DEFAULT_REGION;
  let region = "";
  for (;;) {
    region = (await p.ask("Vertex AI location (vertex.region)", regionFallback)).trim().toLowerCase();
    const problem = regionProblem(region);
    if (!problem) break;
    p.say(problem);
  }
  return { projectId, region, ...(keyPath ? { keyPath } : {}) };
}

/** Where Google credentials would be taken from (for the provider menu), or undefined; never throws. */
export function googleCredentialsOrigin(env: Env): string | undefined {
  try {
    return findCredentialFile(env, { homedir: str(env["HOME"]) ?? homedir(), exists: existsSync })?.origin;
  } catch {
    return undefined;
  }
}

/**
 * True when a vertex run cannot be resolved for want of something `askVertex` asks: used by
 * `hermes model vertex:MODEL` to ask on a terminal instead of failing.
 */
export function vertexNeedsAnswers(message: string): boolean {
  return message.startsWith("vertex:");
}
