/**
 * `hermes setup model` and `hermes model vertex:MODEL` on a terminal (tmux) for Google Vertex AI:
 * they ask for what is missing (the key file, the project, the location), say what is wrong with
 * each bad answer and ask again, test the connection through the loopback Google token endpoint
 * and the fake LLM serving Vertex's path, and save the key file's path in `.env` and the project
 * and location in config.yaml. Leaving half-way writes nothing.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { runHermes, tempHome } from "../support/cli.js";
import {
  type FakeGoogleToken,
  serviceAccountFixture,
  serviceAccountJson,
  startFakeGoogleToken,
} from "../support/fake-google-token.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { hasTmux, Terminal } from "../support/terminal.js";
import { answer } from "../support/wizard-terminal.js";

const PROJECT = "setup-e2e-project";
const llm = useFakeLlm({ basePath: `/v1beta1/projects/${PROJECT}/locations/global/endpoints/openapi` });
const sa = serviceAccountFixture("setup-e2e");
let google: FakeGoogleToken;
beforeAll(async () => {
  google = await startFakeGoogleToken({ serviceAccount: sa });
});
afterAll(async () => {
  await google.close();
});

type Yaml = { model: Record<string, unknown>; vertex?: Record<string, unknown> };
const config = (home: string): Yaml => parse(readFileSync(join(home, "config.yaml"), "utf8")) as Yaml;

function keyFiles(cwd: string): { key: string; broken: string } {
  const key = join(cwd, "sa.json");
  writeFileSync(key, serviceAccountJson(sa, google.url, "some-other-project"), { mode: 0o600 });
  const broken = join(cwd, "broken.json");
  writeFileSync(broken, '{"type": "service_account", "client_email": "x@y", "private_key": "not a key"}');
  return { key, broken };
}

describe.skipIf(!hasTmux)("vertex on a terminal", () => {
  it("hermes setup model: key file, project and location asked until good, tested, then saved", async () => {
    const { home, cwd } = tempHome();
    const { key, broken } = keyFiles(cwd);
    llm.enqueue(reply().text("ok"));
    const env = { HERMES_VERTEX_BASE_URL: new URL(llm.url).origin };
    const term = Terminal.start({ home, cwd, args: ["setup", "model"], rows: 60, env });
    let screen: string;
    try {
      await answer(term, "Provider (number or name)", "vertex");
      await answer(term, "Path to the service-account key file", "");
      await term.waitFor("No gcloud login found");
      await answer(term, "Path to the service-account key file", broken);
      await term.waitFor("is not a PEM private key");
      await answer(term, "Path to the service-account key file", key);
      await term.waitFor(`Using service account ${sa.clientEmail}`);
      await answer(term, "Google Cloud project id (vertex.project_id)", "Not A Project");
      await term.waitFor("is not a Google Cloud project id");
      await answer(term, "Google Cloud project id (vertex.project_id)", PROJECT);
      await answer(term, "Vertex AI location (vertex.region)", "");
      screen = await term.waitFor("Model (number, id or part of one)");
      expect(screen).toContain("google/gemini-2.5-flash");
      await answer(term, "Model (number, id or part of one)", "2");
      await term.waitFor("answered");
      screen = await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }
    expect(screen).not.toContain("PRIVATE KEY");
    expect(llm.chatRequests[0]?.headers.authorization).toBe(`Bearer ${google.issued.at(-1)}`);
    expect(config(home).model).toMatchObject({ provider: "vertex", default: "google/gemini-2.5-flash" });
    expect(config(home).vertex).toEqual({ project_id: PROJECT, region: "global" });
    const dotenv = readFileSync(join(home, ".env"), "utf8");
    expect(dotenv).toContain(`VERTEX_CREDENTIALS_PATH=${key}`);
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);

    // What setup wrote is all a run needs.
    llm.enqueue(reply().text("hello from vertex"));
    const chat = await runHermes(["-z", "hi"], { home, cwd, env });
    expect(chat.stdout.trim()).toBe("hello from vertex");
  });

  it("hermes model vertex:MODEL asks for the missing project; Ctrl+C there writes nothing", async () => {
    const { home, cwd } = tempHome("model:\n  provider: openrouter\n  default: x/y\n");
    const { key } = keyFiles(cwd);
    const gcloudless = JSON.parse(serviceAccountJson(sa, google.url));
    delete gcloudless.project_id;
    writeFileSync(key, JSON.stringify(gcloudless));
    writeFileSync(join(home, ".env"), `VERTEX_CREDENTIALS_PATH=${key}\n`, { mode: 0o600 });
    const before = readFileSync(join(home, "config.yaml"), "utf8");

    const cancelled = Terminal.start({ home, cwd, args: ["model", "vertex:gemini-2.5-pro"] });
    try {
      await cancelled.waitFor("no Google Cloud project id");
      await answer(cancelled, "Use these Google credentials?", "");
      await answer(cancelled, "Google Cloud project id (vertex.project_id)", "");
      await cancelled.waitFor("a project id is needed");
      cancelled.keys("C-c");
      await cancelled.waitFor("[exit 1]");
    } finally {
      cancelled.kill();
    }
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(before);

    const term = Terminal.start({ home, cwd, args: ["model", "vertex:gemini-2.5-pro"] });
    let screen: string;
    try {
      await answer(term, "Use these Google credentials?", "");
      await answer(term, "Google Cloud project id (vertex.project_id)", PROJECT);
      await answer(term, "Vertex AI location (vertex.region)", "europe-west4");
      screen = await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }
    expect(screen).toContain("vertex:google/gemini-2.5-pro");
    expect(config(home).model).toMatchObject({ provider: "vertex", default: "google/gemini-2.5-pro" });
    expect(config(home).vertex).toEqual({ project_id: PROJECT, region: "europe-west4" });
    expect(existsSync(join(home, ".env"))).toBe(true);
  });
});
