/**
 * The model section's conversation for Google Vertex AI with scripted answers: it asks for what is
 * missing (key file, project, location), says what is wrong with each bad answer and asks again,
 * offers the catalog's models (Vertex lists none), and the plan, once applied, writes
 * VERTEX_CREDENTIALS_PATH to `.env` (0600) and `vertex.project_id` / `vertex.region` to config.yaml.
 * Leaving half-way writes nothing.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { applyModelPlan, askModelPlan } from "../../../../src/cli/setup/model-flow.js";
import { PromptCancelled } from "../../../../src/cli/setup/prompter.js";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { serviceAccountFixture, serviceAccountJson } from "../../../support/fake-google-token.js";
import { scriptedPrompter } from "../../../support/scripted-prompter.js";

const sa = serviceAccountFixture("setup-flow");

function flowContext(env: Record<string, string> = {}) {
  const root = mkdtempSync(join(tmpdir(), "hermes-vertex-flow-"));
  const home = join(root, "home");
  const key = join(root, "key.json");
  writeFileSync(key, serviceAccountJson(sa, "https://oauth2.googleapis.com/token"));
  const broken = join(root, "broken.json");
  writeFileSync(broken, "{ not json");
  // An empty HOME: no gcloud login to find.
  return { ctx: { home, env: { HOME: root, ...env }, config: defaultConfig() }, key, broken, root };
}

describe("askModelPlan for vertex", () => {
  it("asks for the key file, project and location until each is good, then offers Vertex's models", async () => {
    const { ctx, key, broken, root } = flowContext();
    const p = scriptedPrompter([
      "vertex",
      "", // empty: gcloud's login, and there is none
      join(root, "nope.json"),
      broken,
      key,
      "Bad_Project",
      "", // the key file's project is offered
      "moon-base",
      "us-central1",
      "2.5-pro",
    ]);
    const plan = await askModelPlan(ctx, p);
    const said = p.said.join("\n");
    expect(said).toContain("No gcloud login found");
    expect(said).toContain(`${join(root, "nope.json")} does not exist`);
    expect(said).toMatch(/✗ the key file .*broken\.json \(VERTEX_CREDENTIALS_PATH\) is not JSON/);
    expect(said).toContain(`Using service account ${sa.clientEmail}`);
    expect(said).toContain('"Bad_Project" is not a Google Cloud project id');
    expect(said).toContain('"moon-base" is not a Vertex AI location');
    expect(said).toContain("google/gemini-2.5-flash");
    expect(p.asked).toContain("Google Cloud project id (vertex.project_id)");
    expect(p.asked).toContain("Vertex AI location (vertex.region)");
    expect(plan).toMatchObject({
      provider: "vertex",
      model: "google/gemini-2.5-pro",
      vertex: { projectId: "key-project", region: "us-central1" },
      envWrites: [{ name: "VERTEX_CREDENTIALS_PATH", value: key }],
    });
    expect(plan.runtime.baseUrl).toBe(
      "https://us-central1-aiplatform.googleapis.com/v1beta1/projects/key-project/locations/us-central1/endpoints/openapi",
    );
    expect(plan.runtime.vertex?.credentials).toEqual({ path: key, origin: "VERTEX_CREDENTIALS_PATH" });

    const lines = applyModelPlan(ctx.home, ctx.config, plan);
    expect(lines.join("\n")).toContain("vertex.project_id: key-project");
    const yaml = readFileSync(join(ctx.home, "config.yaml"), "utf8");
    expect(yaml).toMatch(/vertex:\n\s+project_id: key-project\n\s+region: us-central1/);
    expect(yaml).toContain("provider: vertex");
    const envFile = join(ctx.home, ".env");
    expect(readFileSync(envFile, "utf8")).toContain(`VERTEX_CREDENTIALS_PATH=${key}`);
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    expect(`${yaml}${readFileSync(envFile, "utf8")}`).not.toContain("PRIVATE KEY");
  });

  it("credentials already found are offered; saying yes adds nothing to .env", async () => {
    const { ctx, key } = flowContext();
    const env = { ...ctx.env, GOOGLE_APPLICATION_CREDENTIALS: key, VERTEX_PROJECT_ID: "env-project-1" };
    const p = scriptedPrompter(["vertex", "", "", "", "1"]);
    const plan = await askModelPlan({ ...ctx, env }, p);
    expect(p.asked[1]).toBe("Use these Google credentials?");
    expect(
      p.said.filter((l) =>
        /^ +\d+\. Google Vertex AI {2}\(credentials found: GOOGLE_APPLICATION_CREDENTIALS\)$/.test(l),
      ),
    ).toHaveLength(1);
    expect(p.said).toContain(
      `Google credentials found: service account ${sa.clientEmail} (GOOGLE_APPLICATION_CREDENTIALS: ${key})`,
    );
    expect(p.said.join("\n")).toContain(
      "VERTEX_PROJECT_ID is set (env-project-1); it wins over vertex.project_id.",
    );
    expect(plan.envWrites).toEqual([]);
    expect(plan.vertex).toEqual({ projectId: "env-project-1", region: "global" });
    expect(plan.model).toBe("google/gemini-2.5-pro");
  });

  it("on Google Cloud the machine's own account is offered; the project is asked, nothing goes to .env", async () => {
    const { ctx } = flowContext();
    const env = { ...ctx.env, GCE_METADATA_HOST: "127.0.0.1:9" };
    const p = scriptedPrompter(["vertex", "", "gce-project-12", "", "1"]);
    const plan = await askModelPlan({ ...ctx, env }, p);
    expect(p.said.some((l) => /Google Vertex AI {2}\(credentials found: metadata server\)$/.test(l))).toBe(
      true,
    );
    expect(p.said).toContain(
      "Google credentials found: this machine's service account (metadata server http://127.0.0.1:9/computeMetadata/v1)",
    );
    expect(plan.envWrites).toEqual([]);
    expect(plan.vertex).toEqual({ projectId: "gce-project-12", region: "global" });
  });

  it("leaving half-way (Ctrl+C at the project) writes nothing", async () => {
    const { ctx, key } = flowContext();
    await expect(askModelPlan(ctx, scriptedPrompter(["vertex", key]))).rejects.toBeInstanceOf(
      PromptCancelled,
    );
    expect(existsSync(join(ctx.home, ".env"))).toBe(false);
    expect(existsSync(join(ctx.home, "config.yaml"))).toBe(false);
  });
});
