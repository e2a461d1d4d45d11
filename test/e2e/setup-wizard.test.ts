/**
 * The interactive `hermes setup` sections (model, terminal, gateway, tools, agent) and the
 * `hermes model` picker, driven key by key in a real terminal (tmux) against the fake LLM's
 * /models: what lands in config.yaml and .env (0600), what is printed, and that a conversation
 * left with Ctrl+C or Ctrl+D writes nothing.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { hasTmux, Terminal } from "../support/terminal.js";
import { answer } from "../support/wizard-terminal.js";

const llm = useFakeLlm({ models: ["alpha-7b", "beta-13b", "claude-sonnet-4-5"] });

type Yaml = Record<string, Record<string, unknown>>;
const config = (home: string): Yaml => parse(readFileSync(join(home, "config.yaml"), "utf8")) as Yaml;
const dotenv = (home: string): string => readFileSync(join(home, ".env"), "utf8");

/** The number a list printed in front of `label` (`  12. OpenAI API`). */
function numberOf(screen: string, label: string): string {
  const match = new RegExp(`^\\s*(\\d+)\\. ${label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`, "m").exec(
    screen,
  );
  if (!match?.[1]) throw new Error(`"${label}" is not in the list on screen:\n${screen}`);
  return match[1];
}

describe.skipIf(!hasTmux)("hermes setup on a terminal, every section", () => {
  it("model, terminal, gateway (email, Signal, SMS), tools and agent land in config.yaml and .env", async () => {
    const { home, cwd } = tempHome();
    llm.enqueue(reply().text("ok"));
    const term = Terminal.start({ home, cwd, args: ["setup"], rows: 60 });
    let screen: string;
    try {
      // model: a local server, picked from the list by name, its model by number.
      await answer(term, "Provider (number or name)", "custom");
      await answer(term, "Server address", llm.url);
      await answer(term, "Model (number, id or part of one)", "2");
      await term.waitFor("✓ beta-13b answered");

      // terminal: a container backend asks for its image.
      await term.waitFor("── terminal ──");
      await answer(term, "Terminal backend [local]", "docker");
      await answer(term, "Container image", "python:3.12-slim");
      await answer(term, "Working directory", cwd);

      // gateway: three platforms declined, three set up.
      await answer(term, "Set up telegram? [y/N]", "");
      await answer(term, "Set up discord? [y/N]", "n");
      await answer(term, "Set up slack? [y/N]", "");
      await answer(term, "Set up email? [y/N]", "y");
      await answer(term, "The agent's email address", "agent@mail.example.test");
      await answer(term, "Its password", "pw 4711#not-a-comment");
      await answer(term, "IMAP server", "imap.mail.example.test");
      await answer(term, "SMTP server", "smtp.mail.example.test");
      await answer(
        term,
        "Addresses allowed to talk to the agent on email",
        "alice@example.test, bob@example.test",
      );
      await answer(term, "Set up signal? [y/N]", "yes");
      await answer(term, "signal-cli daemon's HTTP address [http://127.0.0.1:8080]", "");
      await answer(term, "The bot's Signal number", "+15550001111");
      await answer(term, "allowed to talk to the agent on signal", "+15552223333");
      await answer(term, "Set up sms? [y/N]", "y");
      await answer(term, "Twilio account SID", "AC0123456789abcdef");
      await answer(term, "Twilio auth token", "twilio-secret-tok-0815");
      await answer(term, "The Twilio number the agent texts from", "+15554445555");
      await answer(term, "allowed to talk to the agent on sms", "");
      await answer(term, "Set up mattermost? [y/N]", "");
      await answer(term, "Set up matrix? [y/N]", "");
      await answer(term, "Set up whatsapp_cloud? [y/N]", "");
      await answer(term, "Set up homeassistant? [y/N]", "");

      // tools: a wrong name is refused and asked again; numbers and names mix.
      screen = await term.waitFor("Toolsets for the CLI:");
      await answer(term, "Toolsets [", "web, nosuch");
      await term.waitFor('"nosuch" is not a toolset here');
      await answer(term, "Toolsets [", `web, ${numberOf(screen, "terminal")}, file`);

      // agent: a turn budget of 0 is refused.
      await answer(term, "Most tool-calling steps per turn (agent.max_turns)", "0");
      await term.waitFor("A whole number above 0.");
      await answer(term, "Most tool-calling steps per turn (agent.max_turns)", "25");
      await answer(term, "Reasoning effort [default]", "high");
      await answer(term, "Approval mode [manual]", "2");
      screen = await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }

    expect(screen).toContain("Setup done. Start chatting: hermes");
    expect(screen).toContain("saved terminal.backend: docker");
    expect(screen).toContain("saved EMAIL_PASSWORD →");
    expect(screen).toContain('saved platform_toolsets.cli: ["web","terminal","file"]');
    expect(screen).toContain("saved approvals.mode: smart");
    // Secrets typed at the no-echo prompts never reach the screen.
    for (const secret of ["pw 4711#not-a-comment", "twilio-secret-tok-0815"])
      expect(screen).not.toContain(secret);

    const written = config(home);
    expect(written["model"]).toMatchObject({ provider: "custom", base_url: llm.url, default: "beta-13b" });
    expect(written["terminal"]).toMatchObject({ backend: "docker", docker_image: "python:3.12-slim", cwd });
    expect(written["platform_toolsets"]).toEqual({ cli: ["web", "terminal", "file"] });
    expect(written["agent"]).toMatchObject({ max_turns: 25, reasoning_effort: "high" });
    expect(written["approvals"]).toMatchObject({ mode: "smart" });

    const env = dotenv(home);
    for (const line of [
      "EMAIL_ADDRESS=agent@mail.example.test",
      "EMAIL_IMAP_HOST=imap.mail.example.test",
      "EMAIL_SMTP_HOST=smtp.mail.example.test",
      "EMAIL_ALLOWED_USERS=alice@example.test,bob@example.test",
      "SIGNAL_HTTP_URL=http://127.0.0.1:8080",
      "SIGNAL_ACCOUNT=+15550001111",
      "SIGNAL_ALLOWED_USERS=+15552223333",
      "TWILIO_ACCOUNT_SID=AC0123456789abcdef",
      "TWILIO_AUTH_TOKEN=twilio-secret-tok-0815",
      "TWILIO_PHONE_NUMBER=+15554445555",
    ]) {
      expect(env).toContain(line);
    }
    expect(env).not.toMatch(/TELEGRAM|DISCORD|SLACK|SMS_ALLOWED_USERS/);
    // A password with a space and a `#` reads back whole, not cut at a comment.
    expect(parseDotenv(env)["EMAIL_PASSWORD"]).toBe("pw 4711#not-a-comment");
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);

    // Re-run: the settings are the defaults, a secret is kept by Enter and never shown back.
    const again = Terminal.start({ home, cwd, args: ["setup", "gateway"], rows: 60 });
    try {
      await answer(again, "Set up telegram? [y/N]", "");
      await answer(again, "Set up discord? [y/N]", "");
      await answer(again, "Set up slack? [y/N]", "");
      await answer(again, "Change email? [y/N]", "y");
      await answer(
        again,
        "The agent's email address (also the IMAP/SMTP login) [agent@mail.example.test]",
        "",
      );
      await answer(
        again,
        "Its password (an app password where the provider has them) (empty: keep the current one)",
        "",
      );
      await answer(again, "IMAP server (e.g. imap.gmail.com) [imap.mail.example.test]", "");
      await answer(
        again,
        "SMTP server (e.g. smtp.gmail.com) [smtp.mail.example.test]",
        "smtp2.mail.example.test",
      );
      await answer(
        again,
        "on email (comma-separated; empty: pair with hermes pairing) [alice@example.test,bob@example.test]",
        "",
      );
      await answer(again, "Change signal? [y/N]", "");
      await answer(again, "Change sms? [y/N]", "");
      await answer(again, "Set up mattermost? [y/N]", "");
      await answer(again, "Set up matrix? [y/N]", "");
      await answer(again, "Set up whatsapp_cloud? [y/N]", "");
      await answer(again, "Set up homeassistant? [y/N]", "");
      screen = await again.waitFor("[exit 0]");
    } finally {
      again.kill();
    }
    expect(screen).not.toContain("pw 4711");
    expect(screen).toContain("saved EMAIL_SMTP_HOST →");
    expect(screen).not.toContain("saved EMAIL_PASSWORD");
    const rerun = parseDotenv(dotenv(home));
    expect(rerun).toMatchObject({
      EMAIL_ADDRESS: "agent@mail.example.test",
      EMAIL_PASSWORD: "pw 4711#not-a-comment",
      EMAIL_SMTP_HOST: "smtp2.mail.example.test",
      TWILIO_AUTH_TOKEN: "twilio-secret-tok-0815",
    });
  });

  it("a section left with Ctrl+C or Ctrl+D writes nothing of it", async () => {
    const before = "agent:\n  max_turns: 40\n";
    const { home, cwd } = tempHome(before);
    const agent = Terminal.start({ home, cwd, args: ["setup", "agent"] });
    let screen: string;
    try {
      await answer(agent, "agent.max_turns) [40]", "12");
      await answer(agent, "Reasoning effort [default]", "low");
      await agent.waitFor("Approval mode [manual]:");
      agent.keys("C-c");
      screen = await agent.waitFor("[exit 1]");
    } finally {
      agent.kill();
    }
    expect(screen).toContain(
      "Setup left; the sections already finished are saved, nothing else was changed.",
    );
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(before);

    const gateway = Terminal.start({ home, cwd, args: ["setup", "gateway"] });
    try {
      await answer(gateway, "Set up telegram? [y/N]", "y");
      await answer(gateway, "Telegram bot token", "123456:telegram-token-abc");
      await gateway.waitFor("allowed to talk to the agent on telegram");
      gateway.keys("C-d");
      screen = await gateway.waitFor("[exit 1]");
    } finally {
      gateway.kill();
    }
    expect(screen).toContain("Setup left");
    expect(screen).not.toContain("123456:telegram-token-abc");
    expect(existsSync(join(home, ".env"))).toBe(false);
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(before);

    // Ctrl+C while the model section's test request is out: the request is dropped at once and
    // the unfinished section is not saved (the server would answer only after 5 s).
    llm.enqueue(reply().text("ok").delay(5_000));
    const model = Terminal.start({ home, cwd, args: ["setup", "model"], rows: 60 });
    try {
      await answer(model, "Provider (number or name)", "custom");
      await answer(model, "Server address", llm.url);
      await answer(model, "Model (number, id or part of one)", "1");
      await llm.waitForRequests(1);
      model.keys("C-c");
      screen = await model.waitFor("[exit 1]", 4_000);
    } finally {
      model.kill();
    }
    expect(screen).toContain("Setup left");
    expect(screen).not.toContain("saved model.");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(before);
  });
});

describe.skipIf(!hasTmux)("hermes model on a terminal", () => {
  it("picks a hosted provider from the list, takes a pasted key into .env and a model from its /models", async () => {
    const { home, cwd } = tempHome(
      "model:\n  provider: openrouter\n  default: anthropic/claude-sonnet-4\n  api_key: sk-or-old-key\n",
    );
    const term = Terminal.start({ home, cwd, args: ["model"], env: { OPENAI_BASE_URL: llm.url }, rows: 60 });
    let screen: string;
    try {
      screen = await term.waitFor("Provider (number or name)");
      expect(screen).toContain("Current model: openrouter:anthropic/claude-sonnet-4");
      await answer(term, "Provider (number or name)", numberOf(screen, "OpenAI API"));
      await answer(
        term,
        "Paste your OpenAI API key (stored in .env as OPENAI_API_KEY)",
        "sk-picker-key-98765",
      );
      screen = await term.waitFor(/Models at .* \(3\):/);
      expect(screen).toMatch(/claude-sonnet-4-5\s+200k ctx\s+\$3\/\$15 per Mtok/);
      await answer(term, "Model (number, id or part of one)", numberOf(screen, "claude-sonnet-4-5"));
      screen = await term.waitFor("[exit 0]");
    } finally {
      term.kill();
    }
    expect(screen).toContain("saved OPENAI_API_KEY →");
    expect(screen).toContain("openai-api:claude-sonnet-4-5");
    expect(screen).not.toContain("sk-picker-key-98765");
    expect(config(home)["model"]).toMatchObject({
      provider: "openai-api",
      default: "claude-sonnet-4-5",
      api_key: "",
    });
    expect(dotenv(home)).toContain("OPENAI_API_KEY=sk-picker-key-98765");
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    // The list came from the fake with the pasted key.
    const listed = llm.requests.filter((r) => r.path === "/v1/models");
    expect(listed.at(-1)?.headers.authorization).toBe("Bearer sk-picker-key-98765");
  });

  it("left at the model list with Ctrl+C changes nothing", async () => {
    const before = `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: alpha-7b\n`;
    const { home, cwd } = tempHome(before);
    const term = Terminal.start({ home, cwd, args: ["model"], rows: 60 });
    let screen: string;
    try {
      await answer(term, "Provider (number or name)", "");
      await answer(term, "Server address", "");
      screen = await term.waitFor("Model (number, id or part of one) [1]:");
      expect(screen).toMatch(/alpha-7b.*\(current\)/);
      term.keys("C-c");
      screen = await term.waitFor("[exit 1]");
    } finally {
      term.kill();
    }
    expect(screen).toContain("Nothing changed.");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(before);
    expect(existsSync(join(home, ".env"))).toBe(false);
  });
});
