import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/state/sqlite-store.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { disconnectMidStream, type FakeLlm, httpError, reply, startFakeLlm } from "../support/fake-llm.js";

let llm: FakeLlm;
let backup: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
  backup = await startFakeLlm({ models: ["backup-model"] });
});
afterAll(async () => {
  await llm.close();
  await backup.close();
});
beforeEach(() => {
  for (const server of [llm, backup]) {
    server.requests.length = 0;
    server.chatRequests.length = 0;
  }
});

/** config.yaml for provider openrouter with its base URL pointed at the fake server. */
function openrouterConfig(url: string, extra = ""): string {
  return `model:\n  provider: openrouter\n  base_url: ${url}\n  default: fake-model\nagent:\n  api_max_retries: 0\n${extra}`;
}

describe("hermes recovers from failed model calls", () => {
  it("retries a 429, a 500 and a dropped stream, answers, and stores every message", async () => {
    const { home, cwd } = tempHome(
      fakeProviderConfig(llm.url).replace("api_max_retries: 0", "api_max_retries: 3"),
    );
    // The dropped stream first: the first backoff is the short one (1–2 s); the others wait 0.
    llm.enqueue(
      disconnectMidStream(2),
      httpError(429, { error: { message: "slow down" } }, { "retry-after": "0" }),
      httpError(500, { error: { message: "upstream hiccup" } }, { "retry-after": "0" }),
      reply().text("recovered after three failures"),
    );
    const result = await runHermes(["chat", "-q", "hi"], { home, cwd, timeoutMs: 30_000 });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("recovered after three failures");
    expect(result.stderr.match(/retrying in/g)).toHaveLength(3);
    expect(llm.chatRequests).toHaveLength(4);

    const store = openSqliteStore(join(home, "state.db"), { readonly: true });
    try {
      const sessions = store.listSessions();
      expect(sessions).toHaveLength(1);
      const messages = store.conversation(sessions[0]?.id ?? "");
      expect(messages.map((m) => [m.role, m.content])).toEqual([
        ["user", "hi"],
        ["assistant", "recovered after three failures"],
      ]);
    } finally {
      store.close();
    }
  }, 40_000);

  it("rotates to the pool's second key after a 401 on the first", async () => {
    const { home, cwd } = tempHome(openrouterConfig(llm.url));
    const env = { OPENROUTER_API_KEY: "sk-or-first-key-000000000" };
    const added = await runHermes(["auth", "add", "openrouter", "--key", "sk-or-second-key-00000000"], {
      home,
      cwd,
      env,
    });
    expect(added.code).toBe(0);
    llm.enqueue(
      httpError(401, { error: { message: "User not found." } }),
      reply().text("answer via key two"),
    );
    const result = await runHermes(["-z", "hi"], { home, cwd, env });
    expect(result.stdout).toBe("answer via key two\n");
    expect(result.code).toBe(0);
    const auth = llm.chatRequests.map((r) => r.headers["authorization"]);
    expect(auth).toHaveLength(2);
    expect(auth[0]).not.toBe(auth[1]);
    expect(auth[1]).toBe("Bearer sk-or-second-key-00000000");
  });

  it("switches to a fallback provider on a 402 and tells the user", async () => {
    const { home, cwd } = tempHome(
      fakeProviderConfig(
        llm.url,
        `fallback_providers:\n  - provider: custom\n    model: backup-model\n    base_url: ${backup.url}\n`,
      ),
    );
    llm.enqueue(httpError(402, { error: { message: "Insufficient credits" } }));
    backup.enqueue(reply().text("answer from the fallback"));
    const result = await runHermes(["chat", "-q", "hi"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("answer from the fallback");
    expect(llm.chatRequests).toHaveLength(1);
    expect(backup.chatRequests).toHaveLength(1);
    expect((backup.chatRequests[0]?.body as { model?: string } | undefined)?.model).toBe("backup-model");
    expect(result.stderr).toMatch(/custom \(fake-model\) failed: .*Using fallback custom \(backup-model\)/);
  });
});
