/**
 * Running the gateway, end to end through the built CLI: stopping it stops a cron script that is
 * still running (its whole process group) after `agent.cron_drain_timeout`, and records why the
 * job failed; `hermes gateway restart` (SIGUSR1) waits for the running turn up to
 * `agent.restart_after_turn_timeout`, cuts it off, tells the Telegram chat, comes back as a new
 * process, and the owner's next message continues the same session with a note to the model;
 * `display.runtime_footer` puts the model and context on a Telegram reply; `/tools disable
 * server:tool` in a chat takes the MCP tool out of the very next message (its turn waits for the
 * command to reconnect the servers).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listProcesses } from "../../src/util/process-tree.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, hang, reply, startFakeLlm } from "../support/fake-llm.js";
import { startGatewayProcess } from "../support/gateway-process.js";
import { FILESYSTEM_BIN } from "../support/mcp-servers.js";
import { startTelegramEmulator } from "../support/telegram-emulator.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm?.close();
});

async function waitFor<T>(probe: () => T | undefined | false, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const alive = (pid: number) => listProcesses().some((p) => p.pid === pid && p.state !== "Z");

describe("stopping the gateway", () => {
  it("kills a cron script still running after agent.cron_drain_timeout and records why", async () => {
    const h = tempHome(fakeProviderConfig(llm.url, "  cron_drain_timeout: 1\n"));
    mkdirSync(join(h.home, "scripts"));
    const pidFile = join(h.cwd, "child.pid");
    // A background child is in the script's process group; a kill of the leader alone would miss it.
    writeFileSync(join(h.home, "scripts", "slow.sh"), `sleep 120 &\necho $! > ${pidFile}\nwait\n`);
    const created = await runHermes(
      ["cron", "create", "every 1h", "--script", "slow.sh", "--no-agent", "--name", "slow"],
      h,
    );
    expect(created.code, created.stderr).toBe(0);
    const id = /Created ([0-9a-f]{12})/.exec(created.stdout)?.[1] ?? "";
    // Due now, so the gateway's first tick runs it.
    const jobsPath = join(h.home, "cron", "jobs.json");
    const jobs = JSON.parse(readFileSync(jobsPath, "utf8"));
    jobs.jobs[0].next_run_at = new Date(Date.now() - 1000).toISOString();
    writeFileSync(jobsPath, JSON.stringify(jobs));

    const gateway = await startGatewayProcess(h, { HERMES_CRON_TICK_SECONDS: "0.2" });
    try {
      const child = await waitFor(
        () => existsSync(pidFile) && Number(readFileSync(pidFile, "utf8")),
        "the script's child",
      );
      expect(alive(child)).toBe(true);
      const started = Date.now();
      expect(await gateway.stop(20_000)).toBe(0);
      expect(Date.now() - started).toBeLessThan(15_000);
      await waitFor(() => !alive(child), "the script's child to be killed", 5000);
      const job = JSON.parse(readFileSync(jobsPath, "utf8")).jobs.find((j: { id: string }) => j.id === id);
      expect(job.last_status).toBe("error");
      expect(job.last_error).toMatch(/stopped because the gateway .* stopped before it finished/);
      expect(job.running_since).toBeUndefined();
    } finally {
      gateway.child.kill("SIGKILL");
    }
  }, 60_000);
});

describe("hermes gateway restart", () => {
  it("cuts off a turn that outlasts the wait, tells the chat, restarts, and the next message continues", async () => {
    const OWNER = 1001;
    const tg = await startTelegramEmulator({ botUsername: "hermes_test_bot" });
    const h = tempHome(
      fakeProviderConfig(
        llm.url,
        '  restart_after_turn_timeout: 1\ndisplay:\n  tool_progress: "off"\n  streaming: false\n',
      ),
    );
    const env = {
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      TELEGRAM_ALLOWED_USERS: String(OWNER),
    };
    const gateway = await startGatewayProcess(h, env);
    let successor: number | undefined;
    try {
      const owner = tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });
      const before = llm.chatRequests.length;
      llm.enqueue(hang());
      await owner.sendText("migrate the database");
      await waitFor(() => llm.chatRequests.length > before, "the turn to reach the model");

      const notice = tg.nextBotMessage(OWNER);
      const restarted = await runHermes(["gateway", "restart", "--timeout", "30"], {
        ...h,
        env,
        timeoutMs: 40_000,
      });
      expect(restarted.code, restarted.stderr).toBe(0);
      expect(await gateway.stop()).toBe(0); // the old process exited by itself
      successor = Number(/→ (\d+)/.exec(restarted.stdout)?.[1]);
      expect(successor).toBeGreaterThan(0);
      expect(successor).not.toBe(gateway.child.pid);
      expect((await notice(20_000)).text).toMatch(/restarting, so I had to stop in the middle/);
      const entry = Object.values(
        JSON.parse(readFileSync(join(h.home, "sessions", "sessions.json"), "utf8")),
      )[0] as Record<string, unknown>;
      expect(entry["resume_pending"]).toBe(true);

      llm.enqueue(reply().text("Picking the migration back up."));
      const answer = tg.nextBotMessage(OWNER);
      await owner.sendText("go on");
      expect((await answer(30_000)).text).toBe("Picking the migration back up.");
      const sent = JSON.stringify(llm.chatRequests.at(-1)?.body);
      expect(sent).toContain("cut off by a gateway restart");
      expect(sent).toContain("migrate the database");
    } finally {
      gateway.child.kill("SIGKILL");
      if (successor) {
        const stopped = await runHermes(["gateway", "stop", "--timeout", "20"], {
          ...h,
          env,
          timeoutMs: 30_000,
        });
        if (stopped.code !== 0) process.kill(successor, "SIGKILL");
      }
      await tg.stop();
    }
  }, 90_000);
});

describe("the runtime footer on a Telegram reply", () => {
  it("ends the answer with the model and context when display.runtime_footer.enabled is set", async () => {
    const OWNER = 1001;
    const tg = await startTelegramEmulator({ botUsername: "hermes_test_bot" });
    const h = tempHome(
      fakeProviderConfig(
        llm.url,
        'display:\n  tool_progress: "off"\n  runtime_footer:\n    enabled: true\n    fields: [model, context_pct]\n',
      ),
    );
    const env = {
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      TELEGRAM_ALLOWED_USERS: String(OWNER),
    };
    const gateway = await startGatewayProcess(h, env);
    try {
      const owner = tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });
      llm.enqueue(reply().text("All done."));
      const answer = tg.nextBotMessage(OWNER);
      await owner.sendText("hello");
      const text = (await answer(20_000)).text ?? "";
      expect(text.startsWith("All done.")).toBe(true);
      expect(text).toContain("fake-model");
      expect(text).toMatch(/\d+%/);
    } finally {
      await gateway.stop();
      await tg.stop();
    }
  }, 60_000);
});

describe("/tools on an MCP tool in a Telegram chat", () => {
  it("takes a disabled server:tool out of the very next message's tool list, and back in when enabled", async () => {
    const OWNER = 1001;
    const tg = await startTelegramEmulator({ botUsername: "hermes_test_bot" });
    const h = tempHome(
      fakeProviderConfig(
        llm.url,
        `display:\n  tool_progress: "off"\nmcp_servers:\n  filesystem:\n    command: ${JSON.stringify(FILESYSTEM_BIN)}\n    args: [${JSON.stringify(tmpdir())}]\n`,
      ),
    );
    const env = {
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      TELEGRAM_ALLOWED_USERS: String(OWNER),
    };
    const gateway = await startGatewayProcess(h, env);
    const toolNames = (request: { body: unknown } | undefined) =>
      ((request?.body as { tools?: Array<{ function: { name: string } }> })?.tools ?? []).map(
        (t) => t.function.name,
      );
    const texts = () => tg.calls("sendMessage").map((c) => String(c.params["text"]));
    let answers = 0;
    try {
      const owner = tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });
      // The message goes out right behind the command, before the MCP servers have reconnected:
      // its turn waits for the command, so it already has the new tool list.
      const ask = async (text: string, command?: string) => {
        const before = llm.chatRequests.length;
        llm.enqueue(reply().text(`answer ${++answers}`));
        if (command) await owner.sendText(command);
        await owner.sendText(text);
        await waitFor(() => texts().includes(`answer ${answers}`), `answer ${answers}`, 30_000);
        return llm.chatRequests[before];
      };
      expect(toolNames(await ask("first"))).toContain("mcp_filesystem_read_text_file");
      const off = toolNames(await ask("second", "/tools disable filesystem:read_text_file"));
      expect(texts()).toContain("Disabled for telegram: filesystem:read_text_file");
      expect(off).not.toContain("mcp_filesystem_read_text_file");
      expect(off).toContain("mcp_filesystem_list_directory");
      const on = toolNames(await ask("third", "/tools enable filesystem:read_text_file"));
      expect(on).toContain("mcp_filesystem_read_text_file");
    } finally {
      await gateway.stop();
      await tg.stop();
    }
  }, 120_000);
});
