/**
 * Secrets never leave, end to end through the built CLI. A home's `.env` holds a GitHub token and a
 * service password; a scripted model (as a prompt-injected one would) prints `.env`, the whole
 * environment and the token through the terminal, reads a workspace file holding the password, and
 * echoes both in its streamed answer. Neither value appears in any byte sent to the model, in
 * state.db (with its -wal), the trajectory, `hermes sessions export`, stdout/stderr, or a Telegram
 * chat served by the gateway. The terminal does not inherit the `.env` token but does inherit a
 * variable the user exported in their own shell.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { startGatewayProcess } from "../support/gateway-process.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

const GITHUB_TOKEN = `ghp_${"Zq8Lm3Xv7Rt2".repeat(3)}`;
const PASSWORD = "correct-horse-battery-staple-42";
const EXPORTED = "exported-by-user-shell-9912";
const SECRETS = [GITHUB_TOKEN, PASSWORD, EXPORTED];
const OWNER = 1001;

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

function expectClean(where: string, bytes: string | Buffer): void {
  const text = typeof bytes === "string" ? bytes : bytes.toString("latin1");
  for (const secret of SECRETS) expect(text.includes(secret), `${where} holds ${secret}`).toBe(false);
}

type ChatBody = { messages: Array<{ role: string; content: unknown }> };
/** The tool results the model saw, as the last request of the run carried them. */
const toolResults = (): string[] =>
  ((llm.chatRequests.at(-1)?.body as ChatBody | undefined)?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));

function plantHome(extraConfig = ""): { home: string; cwd: string } {
  const h = tempHome(
    fakeProviderConfig(llm.url).replace("agent:\n", "agent:\n  save_trajectories: true\n") + extraConfig,
  );
  writeFileSync(
    join(h.home, ".env"),
    `GITHUB_TOKEN=${GITHUB_TOKEN}\nMY_SERVICE_PASSWORD=${PASSWORD}\nPORT=587\n`,
  );
  writeFileSync(join(h.cwd, "deploy-notes.md"), `# Deploy\nThe service password is ${PASSWORD}.\n`);
  return h;
}

describe("secrets planted in .env", () => {
  it("appear in no request, stored byte, trajectory, export, log or output of a one-shot run", async () => {
    // DEBUG logs carry argument previews and model calls too: the most a log file ever holds.
    const h = plantHome("logging:\n  level: DEBUG\n");
    llm.enqueue(
      reply().toolCall("terminal", { command: "cat $HERMES_HOME/.env" }),
      reply().toolCall("terminal", { command: "env" }),
      reply().toolCall("terminal", {
        // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax, run by bash
        command: 'printenv GITHUB_TOKEN; echo "gh=${#GITHUB_TOKEN} exported=${#EXPORTED_API_TOKEN}"',
      }),
      reply().toolCall("read_file", { path: "deploy-notes.md" }),
      reply().text(`Found them: the token is ${GITHUB_TOKEN} and the password is ${PASSWORD} (${EXPORTED}).`),
    );
    // The user's own prompt quotes a secret too: the transport's last guard catches it.
    const run = await runHermes(["chat", "-q", `find the credentials; the old one was ${EXPORTED}`], {
      ...h,
      env: { EXPORTED_API_TOKEN: EXPORTED },
    });
    expect(run.code, run.stderr).toBe(0);

    // The tools really ran and saw the values; the model got markers instead.
    const results = toolResults();
    expect(results[0]).toContain("GITHUB_TOKEN=[REDACTED:GITHUB_TOKEN]");
    expect(results[0]).toContain("MY_SERVICE_PASSWORD=[REDACTED:MY_SERVICE_PASSWORD]");
    expect(results[0]).toContain("PORT=587");
    expect(results[1]).toContain(`EXPORTED_API_TOKEN=[REDACTED:EXPORTED_API_TOKEN]`);
    // The terminal does not inherit the .env token; it does inherit what the user's shell exported.
    expect(results[1]).not.toContain("GITHUB_TOKEN=");
    expect(results[2]).toContain(`gh=0 exported=${EXPORTED.length}`);
    expect(results[3]).toContain("The service password is [REDACTED:MY_SERVICE_PASSWORD].");

    // 1. No byte sent to the model.
    expectClean("the model requests", JSON.stringify(llm.requests));
    // 5. stdout and stderr (the streamed answer was cut between chunks).
    expectClean("stdout", run.stdout);
    expectClean("stderr", run.stderr);
    expect(run.stdout).toContain(
      "the token is [REDACTED:GITHUB_TOKEN] and the password is [REDACTED:MY_SERVICE_PASSWORD]",
    );

    // 2. state.db and its WAL, byte for byte; owner-only.
    const dbFiles = readdirSync(h.home).filter((f) => f.startsWith("state.db"));
    expect(dbFiles).toContain("state.db");
    for (const file of dbFiles) {
      expectClean(file, readFileSync(join(h.home, file)));
      expect(statSync(join(h.home, file)).mode & 0o077, `${file} mode`).toBe(0);
    }

    // 3. The trajectory, owner-only.
    const trajectory = join(h.cwd, "trajectory_samples.jsonl");
    expect(existsSync(trajectory)).toBe(true);
    expectClean("the trajectory", readFileSync(trajectory));
    expect(readFileSync(trajectory, "utf8")).toContain("[REDACTED:GITHUB_TOKEN]");
    expect(statSync(trajectory).mode & 0o077).toBe(0);

    // 6. Every log file, owner-only.
    const logs = readdirSync(join(h.home, "logs"));
    expect(logs).toContain("agent.log");
    for (const file of logs) {
      expectClean(`logs/${file}`, readFileSync(join(h.home, "logs", file)));
      expect(statSync(join(h.home, "logs", file)).mode & 0o077, `logs/${file} mode`).toBe(0);
    }
    expect(readFileSync(join(h.home, "logs", "agent.log"), "utf8")).toContain("tool=terminal");

    // 4. The session export, owner-only.
    const out = join(h.cwd, "export.jsonl");
    const exported = await runHermes(["sessions", "export", out], h);
    expect(exported.code, exported.stderr).toBe(0);
    expectClean("the export", readFileSync(out));
    expect(readFileSync(out, "utf8")).toContain("[REDACTED:MY_SERVICE_PASSWORD]");
    expect(statSync(out).mode & 0o077).toBe(0);
  }, 60_000);

  it("stay visible when the user turns redaction off (HERMES_REDACT_SECRETS=0)", async () => {
    const h = plantHome();
    llm.enqueue(reply().toolCall("read_file", { path: "deploy-notes.md" }), reply().text("done"));
    const run = await runHermes(["-z", "read the notes"], { ...h, env: { HERMES_REDACT_SECRETS: "0" } });
    expect(run.code, run.stderr).toBe(0);
    expect(toolResults().at(-1)).toContain(PASSWORD);
  }, 30_000);
});

describe("secrets and the Telegram gateway", () => {
  let tg: TelegramEmulator;
  beforeAll(async () => {
    tg = await startTelegramEmulator({ botUsername: "hermes_test_bot" });
  });
  afterAll(async () => {
    await tg?.stop();
  });

  it("never reach the chat, the model or the gateway's log", async () => {
    const h = plantHome();
    const gateway = await startGatewayProcess(h, {
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      TELEGRAM_ALLOWED_USERS: String(OWNER),
    });
    try {
      const before = llm.requests.length;
      llm.enqueue(
        reply().toolCall("terminal", { command: "cat $HERMES_HOME/.env; cat deploy-notes.md" }),
        reply().text(`Here you go: ${GITHUB_TOKEN} / ${PASSWORD}`),
      );
      const client = tg.client({ userId: OWNER, username: "owner", firstName: "Owner" });
      await client.sendText("what are my credentials?");
      const answer = await tg.waitFor(
        () => tg.botMessages(OWNER).find((m) => m.text?.startsWith("Here you go")),
        { timeoutMs: 20_000, what: "the answer" },
      );
      expect(answer.text).toContain("[REDACTED:GITHUB_TOKEN] / [REDACTED:MY_SERVICE_PASSWORD]");
      // Every Bot API call the gateway made: sends, streamed edits, tool progress.
      expectClean("the Telegram calls", JSON.stringify(tg.calls()));
      expectClean("the model requests", JSON.stringify(llm.requests.slice(before)));
    } finally {
      await gateway.stop();
    }
    expectClean("the gateway's stderr", gateway.stderr());
    for (const file of readdirSync(h.home).filter((f) => f.startsWith("state.db")))
      expectClean(file, readFileSync(join(h.home, file)));
  }, 60_000);
});
