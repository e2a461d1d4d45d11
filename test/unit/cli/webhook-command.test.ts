import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runWebhookCommand } from "../../../src/cli/commands/webhook.js";
import { defaultConfig } from "../../../src/config/defaults.js";
import {
  startWebhookServer,
  type WebhookRun,
  type WebhookServer,
} from "../../../src/gateway/webhooks/server.js";
import { sink } from "../../support/text-sink.js";

const T0 = 1_767_225_600; // 2026-01-01T00:00:00Z

const homes: string[] = [];
const servers: WebhookServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of homes.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-webhook-cli-"));
  homes.push(dir);
  return dir;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `hermes webhook …` in-process against `home`. */
async function webhook(home: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const stdout = sink();
  const stderr = sink();
  const code = await runWebhookCommand(args, {
    env: { HERMES_HOME: home, NO_COLOR: "1", ...env },
    stdout,
    stderr,
    now: () => T0,
    testTimeoutMs: 10_000,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

const subscriptions = (home: string) =>
  JSON.parse(readFileSync(join(home, "webhook_subscriptions.json"), "utf8")) as Record<
    string,
    Record<string, unknown>
  >;

describe("hermes webhook subscribe", () => {
  it("stores the subscription in Python's format and prints its URL and generated secret once", async () => {
    const home = tempHome();
    const run = await webhook(home, [
      "subscribe",
      "GitHub Issues",
      "--events",
      "issues, issue_comment",
      "--prompt",
      "New issue #{issue.number}: {issue.title}",
      "--deliver",
      "telegram",
      "--deliver-chat-id",
      "-100123",
      "--skills",
      "triage",
    ]);
    expect(run.code).toBe(0);
    const record = subscriptions(home)["github-issues"];
    expect(record).toEqual({
      description: "Agent-created subscription: github-issues",
      events: ["issues", "issue_comment"],
      secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      prompt: "New issue #{issue.number}: {issue.title}",
      skills: ["triage"],
      deliver: "telegram",
      profile: "default",
      created_at: "2026-01-01T00:00:00Z",
      deliver_extra: { chat_id: "-100123" },
    });
    expect(statSync(join(home, "webhook_subscriptions.json")).mode & 0o777).toBe(0o600);
    expect(run.stdout).toContain("Created webhook subscription github-issues");
    expect(run.stdout).toContain("URL:      http://localhost:8644/webhooks/github-issues");
    expect(run.stdout).toContain(String(record?.["secret"]));
    expect(run.stdout).toContain("Deliver:  telegram (chat -100123)");
    // Not enabled: the user is told how to switch the platform on.
    expect(run.stderr).toContain("WEBHOOK_ENABLED=true");

    // Updating keeps the secret and does not show it again.
    const again = await webhook(home, ["add", "github-issues", "--events", "issues"], {
      WEBHOOK_ENABLED: "true",
    });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("Updated webhook subscription github-issues");
    expect(again.stdout).toContain("Secret:   unchanged");
    expect(again.stdout).not.toContain(String(record?.["secret"]));
    expect(again.stderr).not.toContain("not enabled");
    const updated = subscriptions(home)["github-issues"];
    expect(updated?.["secret"]).toBe(record?.["secret"]);
    expect(updated?.["events"]).toEqual(["issues"]);
    expect(updated?.["deliver"]).toBe("log");
    expect(updated).not.toHaveProperty("deliver_extra");
  });

  it("never echoes a secret given with --secret, and uses WEBHOOK_PORT in the URL", async () => {
    const home = tempHome();
    const run = await webhook(home, ["subscribe", "ci", "--secret", "typed-secret-value"], {
      WEBHOOK_PORT: "9911",
    });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("typed-secret-value");
    expect(run.stdout).toContain("http://localhost:9911/webhooks/ci");
    expect(subscriptions(home)["ci"]?.["secret"]).toBe("typed-secret-value");
  });

  it("rejects a bad name and --deliver-only without a target with exit 2, writing nothing", async () => {
    const home = tempHome();
    const badName = await webhook(home, ["subscribe", "-bad!"]);
    expect(badName.code).toBe(2);
    const direct = await webhook(home, ["subscribe", "alerts", "--deliver-only"]);
    expect(direct.code).toBe(2);
    expect(direct.stderr).toContain("--deliver-only needs --deliver");
    expect(() => statSync(join(home, "webhook_subscriptions.json"))).toThrow();
  });

  it("stores deliver_only for direct delivery", async () => {
    const home = tempHome();
    const run = await webhook(home, [
      "subscribe",
      "alerts",
      "--deliver",
      "discord",
      "--deliver-only",
      "--prompt",
      "Hi",
    ]);
    expect(run.code).toBe(0);
    expect(subscriptions(home)["alerts"]).toMatchObject({ deliver: "discord", deliver_only: true });
    expect(run.stdout).toContain("Message:  Hi");
  });
});

describe("hermes webhook list and remove", () => {
  it("lists subscriptions and config routes without their secrets, then removes one", async () => {
    const home = tempHome();
    writeFileSync(
      join(home, "config.yaml"),
      "platforms:\n  webhook:\n    enabled: true\n    extra:\n      routes:\n        from-config:\n          secret: cfg-secret\n          events: [push]\n",
    );
    expect(
      (await webhook(home, ["subscribe", "issues", "--events", "issues", "--deliver", "slack"])).code,
    ).toBe(0);
    const secret = String(subscriptions(home)["issues"]?.["secret"]);

    const listed = await webhook(home, ["ls"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("2 webhook route(s)");
    expect(listed.stdout).toMatch(/from-config\s+push\s+log\s+config\.yaml/);
    expect(listed.stdout).toMatch(/issues\s+issues\s+slack\s+subscription/);
    expect(listed.stdout).not.toContain(secret);
    expect(listed.stdout).not.toContain("cfg-secret");

    const json = await webhook(home, ["list", "--json"]);
    const parsed = JSON.parse(json.stdout) as { enabled: boolean; routes: Array<Record<string, unknown>> };
    expect(parsed.enabled).toBe(true);
    expect(parsed.routes.map((r) => [r["name"], r["source"]])).toEqual([
      ["from-config", "config"],
      ["issues", "subscription"],
    ]);
    expect(json.stdout).not.toContain(secret);

    const removed = await webhook(home, ["rm", "issues"]);
    expect(removed).toMatchObject({ code: 0, stdout: "Removed webhook subscription issues.\n" });
    const missing = await webhook(home, ["remove", "issues"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('No subscription named "issues"');
    const fromConfig = await webhook(home, ["remove", "from-config"]);
    expect(fromConfig.code).toBe(1);
    expect(fromConfig.stderr).toContain("defined in config.yaml");
  });

  it("says so when there is nothing to list, and fails with exit 2 on a broken file it leaves alone", async () => {
    const home = tempHome();
    const empty = await webhook(home, []);
    expect(empty.code).toBe(0);
    expect(empty.stdout).toContain("No webhook subscriptions");
    writeFileSync(join(home, "webhook_subscriptions.json"), "{oops");
    const broken = await webhook(home, ["list"]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("webhook_subscriptions.json is not valid JSON");
    const add = await webhook(home, ["subscribe", "x"]);
    expect(add.code).toBe(2);
    expect(readFileSync(join(home, "webhook_subscriptions.json"), "utf8")).toBe("{oops");
  });
});

describe("hermes webhook test", () => {
  async function startServer(home: string): Promise<{ server: WebhookServer; runs: WebhookRun[] }> {
    const runs: WebhookRun[] = [];
    const server = await startWebhookServer({
      home,
      config: defaultConfig(),
      env: {},
      host: "127.0.0.1",
      port: 0,
      runAgent: async (run) => {
        runs.push(run);
        return "ok";
      },
      deliver: async () => {},
    });
    servers.push(server);
    return { server, runs };
  }

  it("sends a signed sample event that the running server accepts", async () => {
    const home = tempHome();
    await webhook(home, ["subscribe", "demo", "--prompt", "Said: {message}"]);
    const { server, runs } = await startServer(home);
    const env = { WEBHOOK_PORT: String(server.port) };

    const sent = await webhook(home, ["test", "demo"], env);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^Response 202: \{"status":"accepted","route":"demo","event":"test"/);
    expect(sent.stdout).toContain("Accepted");
    await server.settled();
    expect(runs.map((r) => r.rendered)).toEqual(["Said: Hello from hermes webhook test"]);

    const custom = await webhook(home, ["test", "demo", "--payload", '{"message": "custom"}'], env);
    expect(custom.code).toBe(0);
    await server.settled();
    expect(runs.map((r) => r.rendered)).toContain("Said: custom");

    const badPayload = await webhook(home, ["test", "demo", "--payload", "nope"], env);
    expect(badPayload.code).toBe(2);
  });

  it("explains an event the route filters out", async () => {
    const home = tempHome();
    await webhook(home, ["subscribe", "pushes", "--events", "push"]);
    const { server, runs } = await startServer(home);
    const run = await webhook(home, ["test", "pushes"], { WEBHOOK_PORT: String(server.port) });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Ignored: the route accepts only push; this test sent "test"');
    expect(runs).toEqual([]);
  });

  it("says clearly when no server listens, and when the route does not exist", async () => {
    const home = tempHome();
    await webhook(home, ["subscribe", "demo"]);
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const freePort = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));

    const run = await webhook(home, ["test", "demo"], { WEBHOOK_PORT: String(freePort) });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `No webhook server is listening at http://127.0.0.1:${freePort}/webhooks/demo`,
    );

    const unknown = await webhook(home, ["test", "ghost"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No webhook route named "ghost"');
  });
});
