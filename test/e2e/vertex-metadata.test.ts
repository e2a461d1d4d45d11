/**
 * Vertex AI on a Google Cloud machine, through the built CLI: no key file and no gcloud login, the
 * token and the project come from the metadata server (a loopback fake reached through
 * GCE_METADATA_HOST, as Google's libraries allow). A one-shot with a tool call, then status and
 * doctor naming where the credentials came from.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHermes, tempHome } from "../support/cli.js";
import { type FakeGceMetadata, startFakeGceMetadata } from "../support/fake-gce-metadata.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const PROJECT = "gce-e2e-project";
const BASE_PATH = `/v1beta1/projects/${PROJECT}/locations/global/endpoints/openapi`;
const llm = useFakeLlm({ basePath: BASE_PATH });
let metadata: FakeGceMetadata;

beforeAll(async () => {
  metadata = await startFakeGceMetadata({ projectId: PROJECT });
});
afterAll(async () => {
  await metadata.close();
});

function everything(dir: string): string {
  let out = "";
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out += everything(path);
    else out += readFileSync(path).toString("latin1");
  }
  return out;
}

function gceHome() {
  const dirs = tempHome(
    "model:\n  provider: vertex\n  default: gemini-2.5-flash\nagent:\n  api_max_retries: 0\n",
  );
  writeFileSync(
    join(dirs.home, ".env"),
    `GCE_METADATA_HOST=${metadata.host}\nHERMES_VERTEX_BASE_URL=${new URL(llm.url).origin}\n`,
    { mode: 0o600 },
  );
  return dirs;
}

describe("vertex on a Google Cloud machine", () => {
  it("a one-shot with a tool call: the metadata server's token and project", async () => {
    const { home, cwd } = gceHome();
    llm.enqueue(
      reply().toolCall("terminal", { command: "echo ran-on-gce" }),
      reply().text("answered with the VM's account"),
    );
    const run = await runHermes(["-z", "go"], { home, cwd });
    expect(run.stderr).toBe("");
    expect(run.stdout.trim()).toBe("answered with the VM's account");
    expect(run.code).toBe(0);

    const token = metadata.issued.at(-1) ?? "";
    expect(metadata.issued).toHaveLength(1);
    expect(llm.chatRequests).toHaveLength(2);
    for (const sent of llm.chatRequests) {
      expect(sent.path).toBe(`${BASE_PATH}/chat/completions`);
      expect(sent.headers.authorization).toBe(`Bearer ${token}`);
    }
    const second = llm.chatRequests[1]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(second.messages)).toContain("ran-on-gce");
    expect(metadata.requests.every((r) => r.flavor === "Google")).toBe(true);
    expect(metadata.requests.map((r) => r.path.split("?")[0]).sort()).toEqual([
      "/computeMetadata/v1/instance/service-accounts/default/token",
      "/computeMetadata/v1/project/project-id",
    ]);
    expect(everything(home)).not.toContain(token);
  });

  it("status names the metadata server; doctor gets a token and the project from it", async () => {
    const { home, cwd } = gceHome();
    const status = await runHermes(["status"], { home, cwd });
    expect(status.stdout).toContain(
      `this machine's service account (metadata server http://${metadata.host}`,
    );
    expect(status.stdout).toContain("asked of the metadata server at the first call");
    const doctor = await runHermes(["doctor"], { home, cwd, timeoutMs: 60_000 });
    const line = doctor.stdout.split("\n").find((l) => l.includes("primary: vertex")) ?? doctor.stdout;
    expect(line).toMatch(
      new RegExp(`✓ .*token issued for this machine's service account, project ${PROJECT}, location global`),
    );
  });
});
