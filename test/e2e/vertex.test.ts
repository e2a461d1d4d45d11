/**
 * Google Vertex AI through the built CLI, against two loopback fakes: Google's token endpoint
 * (the key file's `token_uri`; for gcloud's login, HERMES_GOOGLE_TOKEN_URL) and the fake LLM
 * serving Vertex's OpenAI-compatible path (HERMES_VERTEX_BASE_URL), so nothing reaches
 * googleapis.com. A one-shot with a tool call must carry the bearer Google issued, and the private
 * key and refresh token must appear nowhere: not in state.db, the logs, nor what a terminal
 * command (even one that reads the key file) hands back to the model.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runHermes, tempHome } from "../support/cli.js";
import {
  type FakeGoogleToken,
  GCLOUD_USER,
  serviceAccountFixture,
  serviceAccountJson,
  startFakeGoogleToken,
} from "../support/fake-google-token.js";
import { httpError, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const PROJECT = "hermes-e2e-project";
const BASE_PATH = `/v1beta1/projects/${PROJECT}/locations/global/endpoints/openapi`;
const llm = useFakeLlm({ basePath: BASE_PATH });
const sa = serviceAccountFixture("vertex-e2e");
let google: FakeGoogleToken;

beforeAll(async () => {
  google = await startFakeGoogleToken({ serviceAccount: sa, user: GCLOUD_USER });
});
afterAll(async () => {
  await google.close();
});
beforeEach(() => {
  google.mode = "ok";
});

const CONFIG = `model:\n  provider: vertex\n  default: gemini-2.5-flash\nvertex:\n  project_id: ${PROJECT}\nagent:\n  api_max_retries: 0\n`;

/** A home on vertex with a service-account key file outside it, named in `.env`. */
function vertexHome(keyText = serviceAccountJson(sa, google.url)): {
  home: string;
  cwd: string;
  key: string;
} {
  const dirs = tempHome(CONFIG);
  const key = join(dirs.cwd, "..", "sa-key.json");
  writeFileSync(key, keyText, { mode: 0o600 });
  writeFileSync(
    join(dirs.home, ".env"),
    `VERTEX_CREDENTIALS_PATH=${key}\nHERMES_VERTEX_BASE_URL=${new URL(llm.url).origin}\n`,
    { mode: 0o600 },
  );
  return { ...dirs, key };
}

/** Every file under `dir` (state.db and its WAL, logs, sessions), as text. */
function everything(dir: string): string {
  let out = "";
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) out += everything(path);
    else if (name !== ".env") out += readFileSync(path).toString("latin1");
  }
  return out;
}

/** Lines of the PEM body: any of them in a file means the key leaked. */
const keyLines = sa.privateKeyPem
  .split("\n")
  .filter((l) => l && !l.startsWith("-----"))
  .filter((_l, i) => i % 5 === 1);

function toolResult(index: number): string {
  const body = llm.chatRequests[index]?.body as { messages: Array<{ role: string; content: unknown }> };
  return String(body.messages.find((m) => m.role === "tool")?.content ?? "");
}

describe("vertex provider", () => {
  it("a one-shot with a tool call: Google's token as bearer, and the key nowhere else", async () => {
    const { home, cwd, key } = vertexHome();
    const exchanges = google.requests.length;
    llm.enqueue(
      reply().toolCall("terminal", {
        command: `env | grep -c -e VERTEX_CREDENTIALS_PATH -e HERMES_VERTEX; cat ${key}; echo done-reading`,
      }),
      reply().text("the answer from vertex"),
    );
    const run = await runHermes(["-z", "read the key file"], { home, cwd });
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toBe("the answer from vertex");
    expect(run.code).toBe(0);

    expect(google.requests.length - exchanges).toBe(1);
    const token = google.issued.at(-1) ?? "";
    expect(llm.chatRequests).toHaveLength(2);
    for (const sent of llm.chatRequests) {
      expect(sent.path).toBe(`${BASE_PATH}/chat/completions`);
      expect(sent.headers.authorization).toBe(`Bearer ${token}`);
      expect(sent.body).toMatchObject({ model: "google/gemini-2.5-flash" });
    }
    const result = toolResult(1);
    expect(result).toContain("done-reading");
    expect(result.split("\n")[0]?.trim()).toBe("0");
    expect(result).toContain("REDACTED");
    for (const line of keyLines) expect(result).not.toContain(line);

    const stored = everything(home);
    expect(stored).toContain("the answer from vertex");
    for (const line of keyLines) expect(stored).not.toContain(line);
    expect(stored).not.toContain(token);
  });

  it("gcloud's login from ~/.config/gcloud: the refresh token is traded, never stored or shown", async () => {
    const { home, cwd } = tempHome(CONFIG);
    const gcloud = join(home, ".config", "gcloud");
    mkdirSync(gcloud, { recursive: true });
    writeFileSync(
      join(gcloud, "application_default_credentials.json"),
      JSON.stringify({
        type: "authorized_user",
        client_id: GCLOUD_USER.clientId,
        client_secret: GCLOUD_USER.clientSecret,
        refresh_token: GCLOUD_USER.refreshToken,
      }),
    );
    writeFileSync(
      join(home, ".env"),
      `HERMES_GOOGLE_TOKEN_URL=${google.url}\nHERMES_VERTEX_BASE_URL=${new URL(llm.url).origin}\n`,
      { mode: 0o600 },
    );
    llm.enqueue(
      reply().toolCall("terminal", { command: "cat ~/.config/gcloud/application_default_credentials.json" }),
      reply().text("done as the user"),
    );
    const run = await runHermes(["-z", "go"], { home, cwd });
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toBe("done as the user");
    expect(google.requests.at(-1)?.grant).toBe("refresh_token");
    expect(llm.chatRequests[0]?.headers.authorization).toBe(`Bearer ${google.issued.at(-1)}`);
    const result = toolResult(1);
    expect(result).toContain("authorized_user");
    expect(result).not.toContain(GCLOUD_USER.refreshToken);
    expect(result).not.toContain(GCLOUD_USER.clientSecret);
    const stored = everything(join(home)).replace(
      readFileSync(join(gcloud, "application_default_credentials.json"), "latin1"),
      "",
    );
    expect(stored).not.toContain(GCLOUD_USER.refreshToken);
  });

  it("a broken key file: exit 2 and one line naming the file and the fix, no request sent", async () => {
    const { home, cwd, key } = vertexHome("this is not json");
    const run = await runHermes(["-z", "hi"], { home, cwd });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`vertex: the key file ${key} (VERTEX_CREDENTIALS_PATH) is not JSON`);
    expect(run.stderr).toContain("download the key again");
    expect(llm.chatRequests).toHaveLength(0);

    // A variable naming a file that is gone: the path is shown as it is (a path is no secret).
    const gone = join(cwd, "gone.json");
    writeFileSync(join(home, ".env"), `GOOGLE_APPLICATION_CREDENTIALS=${gone}\n`, { mode: 0o600 });
    const missing = await runHermes(["-z", "hi"], { home, cwd });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(
      `vertex: GOOGLE_APPLICATION_CREDENTIALS names ${gone}, which does not exist`,
    );
  });

  it("a key Google refuses: the one-shot fails with Google's reason and the fix; the key never shows", async () => {
    const { home, cwd } = vertexHome();
    google.mode = "refuse";
    const run = await runHermes(["-z", "hi"], { home, cwd });
    expect(run.code).not.toBe(0);
    const said = `${run.stdout}${run.stderr}`;
    expect(said).toContain("refused the credentials (HTTP 400: invalid_grant: Invalid JWT Signature.)");
    expect(said).toContain("create a new JSON key and point VERTEX_CREDENTIALS_PATH at it");
    expect(llm.chatRequests).toHaveLength(0);
    for (const line of keyLines) expect(said + everything(home)).not.toContain(line);
  });

  it("hermes doctor gets a token; hermes status shows the account, project and location", async () => {
    const { home, cwd, key } = vertexHome();
    const doctor = await runHermes(["doctor"], { home, cwd, timeoutMs: 60_000 });
    const line = doctor.stdout.split("\n").find((l) => l.includes("primary: vertex")) ?? doctor.stdout;
    expect(line).toMatch(
      new RegExp(
        `✓ .*token issued for ${sa.clientEmail.replace(/\./g, "\\.")}, project ${PROJECT}, location global, model google/gemini-2\\.5-flash`,
      ),
    );
    expect(doctor.stdout).not.toMatch(/unknown key "vertex/);
    const status = await runHermes(["status"], { home, cwd });
    expect(status.stdout).toContain(`Google auth`);
    expect(status.stdout).toContain(`service account ${sa.clientEmail}`);
    expect(status.stdout).toContain(key);
    expect(status.stdout).toMatch(new RegExp(`Project +${PROJECT} \\(from vertex\\.project_id\\)`));
    google.mode = "refuse";
    const refused = await runHermes(["doctor"], { home, cwd, timeoutMs: 60_000 });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain("refused the credentials");
    expect(refused.stdout).toContain("hermes setup model");
  });

  it("a 401 mid-session: the token is renewed once and the run goes on; a second 401 is a clear error", async () => {
    const { home, cwd } = vertexHome();
    const before = google.issued.length;
    llm.enqueue(
      reply().toolCall("terminal", { command: "echo step-one" }),
      httpError(401, {
        error: {
          code: 401,
          message: "Request had invalid authentication credentials.",
          status: "UNAUTHENTICATED",
        },
      }),
      reply().text("finished after renewal"),
    );
    const run = await runHermes(["-z", "two steps"], { home, cwd });
    expect(run.stdout.trim()).toBe("finished after renewal");
    expect(run.code).toBe(0);
    const [first, second] = google.issued.slice(before);
    expect(google.issued.length - before).toBe(2);
    expect(llm.chatRequests.map((r) => r.headers.authorization)).toEqual([
      `Bearer ${first}`,
      `Bearer ${first}`,
      `Bearer ${second}`,
    ]);

    llm.enqueue(httpError(401), httpError(401));
    const refused = await runHermes(["-z", "again"], { home, cwd });
    expect(refused.code).not.toBe(0);
    expect(`${refused.stdout}${refused.stderr}`).toContain(
      `Vertex AI refused a freshly issued token for project ${PROJECT} (location global): give ${sa.clientEmail} the role roles/aiplatform.user there`,
    );
    expect(`${refused.stdout}${refused.stderr}`).toContain(
      "hermes status shows the Google credentials in use; hermes setup model changes them",
    );
    expect(llm.pending).toBe(0);
  });

  it("hermes model vertex:MODEL switches with the publisher added; without credentials it says what to set", async () => {
    const { home, cwd } = vertexHome();
    writeFileSync(
      join(home, "config.yaml"),
      `model:\n  provider: openrouter\n  default: x/y\nvertex:\n  project_id: ${PROJECT}\n`,
    );
    const set = await runHermes(["model", "vertex:gemini-2.5-pro"], { home, cwd });
    expect(set.stdout.trim()).toBe("vertex:google/gemini-2.5-pro");
    expect(set.code).toBe(0);
    const yaml = readFileSync(join(home, "config.yaml"), "utf8");
    expect(yaml).toContain("provider: vertex");
    expect(yaml).toContain("default: google/gemini-2.5-pro");
    expect(yaml).toContain(`project_id: ${PROJECT}`);
    const list = await runHermes(["model", "--list", "vertex"], { home, cwd });
    expect(list.stdout).toContain("google/gemini-2.5-flash");
    expect(llm.requests).toHaveLength(0);

    const bare = tempHome("model:\n  provider: openrouter\n");
    const missing = await runHermes(["model", "vertex:gemini-2.5-pro"], bare);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("vertex: no Google credentials found");
    expect(missing.stderr).toContain("run gcloud auth application-default login");
    expect(readFileSync(join(bare.home, "config.yaml"), "utf8")).toBe("model:\n  provider: openrouter\n");
  });
});
