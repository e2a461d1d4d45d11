/**
 * The log files end to end, through the built CLI against the fake LLM: a one-shot with a tool
 * call writes agent.log lines carrying its session id and the tool; a provider error lands in
 * errors.log; `--version` and `--help` open nothing; a gateway run (Telegram emulator) writes
 * gateway.log: connect, messages in and out with chat id and size but never their text,
 * pairing (the code offered, the owner's approval; never the code itself), disconnect.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, httpError, reply, startFakeLlm } from "../support/fake-llm.js";
import { startGatewayProcess } from "../support/gateway-process.js";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

const logFile = (home: string, name: string) => {
  const path = join(home, "logs", name);
  return existsSync(path) ? readFileSync(path, "utf8") : "";
};
const LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARNING|ERROR) (\S+) (\S+): /;

async function waitFor(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("log files of the CLI", () => {
  it("a one-shot with a tool call writes agent.log with its session id; --version and --help write nothing", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    for (const args of [["--version"], ["--help"]]) {
      const quiet = await runHermes(args, h);
      expect(quiet.code).toBe(0);
    }
    expect(existsSync(join(h.home, "logs"))).toBe(false);

    llm.enqueue(reply().toolCall("terminal", { command: "echo logged-run" }), reply().text("Done."));
    const result = await runHermes(["-z", "say something private"], h);
    expect(result.code, result.stderr).toBe(0);
    expect(statSync(join(h.home, "logs")).mode & 0o777).toBe(0o700);
    expect(statSync(join(h.home, "logs", "agent.log")).mode & 0o777).toBe(0o600);

    const lines = logFile(h.home, "agent.log").trim().split("\n");
    for (const line of lines) expect(line).toMatch(LINE);
    const start = lines.find((l) => l.includes(" agent: session start "));
    expect(start).toMatch(
      / INFO (\d{8}_\d{6}_[0-9a-f]{6}) agent: session start model=fake-model provider=custom tools=\d+$/,
    );
    const sessionId = LINE.exec(start ?? "")?.[2] ?? "";
    expect(lines.find((l) => l.includes("tool call"))).toMatch(
      new RegExp(`^\\S+ INFO ${sessionId} agent: tool call tool=terminal call=\\S+ ms=\\d+ ok=true$`),
    );
    expect(lines.find((l) => l.includes("turn end"))).toContain(
      `INFO ${sessionId} agent: turn end reason=completed`,
    );
    expect(lines.find((l) => l.includes("session end"))).toContain(`INFO ${sessionId} agent: session end`);
    // At INFO: no prompt, no answer, no arguments.
    const all = lines.join("\n");
    expect(all).not.toContain("private");
    expect(all).not.toContain("Done.");
    expect(all).not.toContain("logged-run");
    expect(existsSync(join(h.home, "logs", "errors.log"))).toBe(false);
  });

  it("a provider error lands in errors.log with the session id; -v adds argument previews", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(
      reply().toolCall("terminal", { command: "echo before-the-error" }),
      httpError(401, { error: { message: "invalid api key for fake-llm" } }),
    );
    const result = await runHermes(["-v", "-q", "try it"], h);
    expect(result.code).toBe(1);
    const errors = logFile(h.home, "errors.log");
    expect(errors).toMatch(/^\S+ ERROR \d{8}_\d{6}_[0-9a-f]{6} agent: .*invalid api key for fake-llm/m);
    const agentLog = logFile(h.home, "agent.log");
    expect(agentLog).toMatch(
      / DEBUG \S+ agent: tool start tool=terminal call=\S+ args="echo before-the-error"/,
    );
    expect(agentLog).toContain("turn end reason=error");
  });
});

describe("log files of the gateway", () => {
  let tg: TelegramEmulator;
  beforeAll(async () => {
    tg = await startTelegramEmulator({ botUsername: "hermes_log_bot" });
  });
  afterAll(async () => {
    await tg?.stop();
  });

  it("gateway.log gets connect, messages in and out without their text, pairing and disconnect", async () => {
    const OWNER = 3003;
    const STRANGER = 4004;
    const h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\n'));
    const env = {
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      TELEGRAM_ALLOWED_USERS: String(OWNER),
    };
    const gateway = await startGatewayProcess(h, env);
    let code = "";
    try {
      llm.enqueue(reply().text("A reply nobody should find in the logs."));
      const next = tg.nextBotMessage(OWNER);
      await tg
        .client({ userId: OWNER, username: "owner", firstName: "Owner" })
        .sendText("my private question");
      await next(20_000);
      const pairing = tg.nextBotMessage(STRANGER);
      await tg.client({ userId: STRANGER, username: "stranger", firstName: "S" }).sendText("let me in");
      const offer = await pairing(20_000);
      code = /hermes pairing approve telegram ([A-Z0-9]{8})/.exec(offer.text ?? "")?.[1] ?? "";
      const approved = await runHermes(["pairing", "approve", "telegram", code], { ...h, env });
      expect(approved.code, approved.stderr).toBe(0);
      await waitFor(
        () =>
          /message out/.test(logFile(h.home, "gateway.log")) &&
          /pairing code sent/.test(logFile(h.home, "gateway.log")),
        "the gateway's log lines",
      );
    } finally {
      expect(await gateway.stop()).toBe(0);
    }
    const log = logFile(h.home, "gateway.log");
    for (const line of log.trim().split("\n")) expect(line).toMatch(LINE);
    expect(log).toMatch(/ INFO - gateway\.telegram: connected\n/);
    expect(log).toMatch(/ INFO - gateway: started pid=\d+ services=/);
    expect(log).toMatch(
      new RegExp(` INFO \\S+ gateway\\.telegram: message in chat=${OWNER} user=${OWNER} type=dm chars=19\\n`),
    );
    expect(log).toMatch(
      new RegExp(
        ` INFO (\\d{8}_\\d{6}_[0-9a-f]{6}) gateway\\.telegram: message out chat=${OWNER} chars=39 reason=completed\\n`,
      ),
    );
    expect(log).toMatch(
      new RegExp(
        ` gateway\\.telegram: message from unauthorized user chat=${STRANGER} user=${STRANGER} action=pairing`,
      ),
    );
    expect(log).toMatch(new RegExp(` gateway\\.telegram: pairing code sent user=${STRANGER}`));
    expect(log).toMatch(
      new RegExp(` INFO - gateway\\.pairing: user approved platform=telegram user=${STRANGER}\\n`),
    );
    expect(log).not.toContain(code);
    expect(log).toMatch(/ INFO - gateway\.telegram: disconnected\n/);
    expect(log).toMatch(/ INFO - gateway: stopped pid=\d+\n$/);
    // The conversation's agent logs to agent.log under the same session id as "message out".
    const sessionId = /(\d{8}_\d{6}_[0-9a-f]{6}) gateway\.telegram: message out/.exec(log)?.[1];
    expect(logFile(h.home, "agent.log")).toContain(`INFO ${sessionId} agent: session start`);
    for (const name of ["gateway.log", "agent.log"]) {
      expect(logFile(h.home, name)).not.toContain("private question");
      expect(logFile(h.home, name)).not.toContain("nobody should find");
      expect(logFile(h.home, name)).not.toContain("let me in");
    }
  }, 60_000);
});
