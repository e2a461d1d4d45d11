/**
 * A batch dataset row with `image` runs that prompt's tools in a container of that image (the
 * docker backend, a locally built test image), while a row without one runs on the host; the
 * prompt's container is removed when it ends. Skipped only where docker.io is not installed.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LABEL } from "../../src/environments/docker/environment.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { dockerReady, TEST_DISTRO, TEST_IMAGE } from "../support/docker.js";
import { type RecordedRequest, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const skip = await dockerReady();
const llm = useFakeLlm();

type Body = { messages: Array<{ role: string; content: unknown }> };
const messagesOf = (r: RecordedRequest) => (r.body as Body).messages;

describe.skipIf(skip !== undefined)("hermes batch: a row's image", () => {
  it("runs the row's tools in a container of its image, other rows on the host", {
    timeout: 180_000,
  }, async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const data = join(cwd, "rows.jsonl");
    writeFileSync(
      data,
      `${JSON.stringify({ prompt: "where am I (container)", image: TEST_IMAGE })}\n${JSON.stringify({ prompt: "where am I (host)" })}\n`,
    );
    const results = new Map<string, string>();
    llm.respondWith((request) => {
      const messages = messagesOf(request);
      const prompt = String(messages.find((m) => m.role === "user")?.content ?? "");
      const tool = messages.find((m) => m.role === "tool");
      if (tool) {
        results.set(prompt, String(tool.content));
        return reply().reasoning("seen").text("here");
      }
      return reply().reasoning("look").toolCall("terminal", { command: "cat /etc/os-release; hostname" });
    });
    const result = await runHermes(
      ["batch", "run", data, "--run-name", "images", "--workers", "2", "--toolsets", "terminal"],
      { home, cwd, timeoutMs: 170_000 },
    );
    llm.respondWith(undefined);
    expect(result.code, result.stderr).toBe(0);
    const inContainer = results.get("where am I (container)") ?? "";
    expect(inContainer).toContain(TEST_DISTRO);
    expect(inContainer).not.toContain(hostname());
    const onHost = results.get("where am I (host)") ?? "";
    expect(onHost).toContain(hostname());
    expect(onHost).not.toContain(TEST_DISTRO);
    // The image is recorded with the trajectory; the prompt's container is gone.
    const lines = spawnSync("cat", [join(home, "data", "images", "trajectories.jsonl")]).stdout.toString();
    expect(lines).toContain(`"image":"${TEST_IMAGE}"`);
    const left = spawnSync("docker", [
      "ps",
      "-aq",
      "--filter",
      `label=${LABEL}.home=${home}`,
    ]).stdout.toString();
    expect(left.trim()).toBe("");
  });
});
