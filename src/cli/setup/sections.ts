/**
 * The `terminal`, `gateway`, `tools` and `agent` sections of `hermes setup`. Each asks its
 * questions with the current values as defaults (so setup is re-runnable) and returns the edits;
 * `applyEdits` writes them once the section is answered, so leaving mid-section writes nothing.
 */
import type { HermesConfig } from "../../config/defaults.js";
import { setEnvVar } from "../../config/env-file.js";
import { setConfigValue } from "../../config/write.js";
import { SIGNAL_DEFAULT_HTTP_URL } from "../../gateway/platforms/signal.js";
import { TOOLSETS } from "../../tools/toolsets.js";
import type { Prompter } from "./prompter.js";

export interface SectionEdits {
  /** `[dotted key, raw value]`, parsed as `hermes config set` parses it. */
  config: Array<[string, string]>;
  env: Array<{ name: string; value: string }>;
}

export interface SectionContext {
  config: HermesConfig;
  env: Record<string, string | undefined>;
}

const emptyEdits = (): SectionEdits => ({ config: [], env: [] });

/** Asks for one of `options` by number or name; the default is shown in brackets. */
export async function choose(
  p: Prompter,
  question: string,
  options: readonly string[],
  fallback: string,
): Promise<string> {
  for (const [i, o] of options.entries()) p.say(`  ${i + 1}. ${o}`);
  for (;;) {
    const answer = (await p.ask(question, fallback)).trim();
    const byNumber = /^\d+$/.test(answer) ? options[Number(answer) - 1] : undefined;
    const chosen = byNumber ?? options.find((o) => o.toLowerCase() === answer.toLowerCase());
    if (chosen) return chosen;
    p.say(`"${answer}" is not one of: ${options.join(", ")}.`);
  }
}

const BACKENDS = ["local", "docker", "podman", "ssh", "singularity", "modal", "daytona"] as const;

/** Where commands run (`terminal.backend`), with what each backend cannot do without. */
export async function terminalSection(ctx: SectionContext, p: Prompter): Promise<SectionEdits> {
  const edits = emptyEdits();
  const t = ctx.config.terminal;
  p.say("Where the agent's terminal and file tools act:");
  const current = typeof t.backend === "string" && t.backend ? t.backend : "local";
  const backend = await choose(p, "Terminal backend", BACKENDS, current);
  edits.config.push(["terminal.backend", backend]);
  if (backend === "docker" || backend === "podman") {
    const image = typeof t["docker_image"] === "string" && t["docker_image"] ? t["docker_image"] : "";
    const answer = await p.ask("Container image (empty: the default image)", image || undefined);
    if (answer) edits.config.push(["terminal.docker_image", answer]);
  } else if (backend === "ssh") {
    const host = await askRequired(p, "SSH host", stringAt(t, "ssh_host"));
    edits.config.push(["terminal.ssh_host", host]);
    const user = await p.ask("SSH user (empty: yours)", stringAt(t, "ssh_user"));
    if (user) edits.config.push(["terminal.ssh_user", user]);
  }
  const cwd = await p.ask("Working directory (empty: where hermes starts)", t.cwd || undefined);
  if (cwd !== (t.cwd ?? "")) edits.config.push(["terminal.cwd", cwd]);
  return edits;
}

function stringAt(section: Record<string, unknown>, key: string): string | undefined {
  const value = section[key];
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

async function askRequired(p: Prompter, question: string, fallback: string | undefined): Promise<string> {
  for (;;) {
    const answer = await p.ask(question, fallback);
    if (answer) return answer;
    p.say("This one is needed.");
  }
}

interface PlatformField {
  env: string;
  what: string;
  /** Read without echo and never shown as a default (passwords, tokens). */
  secret?: boolean;
  /** Offered when the variable is unset (e.g. signal-cli's usual address). */
  fallback?: string;
}

interface PlatformSpec {
  /** Also the `<NAME>_ALLOWED_USERS` prefix the gateway's allowlist reads. */
  name: string;
  /** What the allowlist holds on this platform. */
  who: string;
  fields: PlatformField[];
}

const PLATFORMS: readonly PlatformSpec[] = [
  {
    name: "telegram",
    who: "User ids",
    fields: [{ env: "TELEGRAM_BOT_TOKEN", what: "Telegram bot token (from @BotFather)", secret: true }],
  },
  {
    name: "discord",
    who: "User ids",
    fields: [{ env: "DISCORD_BOT_TOKEN", what: "Discord bot token", secret: true }],
  },
  {
    name: "slack",
    who: "User ids",
    fields: [
      { env: "SLACK_BOT_TOKEN", what: "Slack bot token (xoxb-…)", secret: true },
      { env: "SLACK_APP_TOKEN", what: "Slack app-level token (xapp-…, Socket Mode)", secret: true },
    ],
  },
  {
    name: "email",
    who: "Addresses",
    fields: [
      { env: "EMAIL_ADDRESS", what: "The agent's email address (also the IMAP/SMTP login)" },
      {
        env: "EMAIL_PASSWORD",
        what: "Its password (an app password where the provider has them)",
        secret: true,
      },
      { env: "EMAIL_IMAP_HOST", what: "IMAP server (e.g. imap.gmail.com)" },
      { env: "EMAIL_SMTP_HOST", what: "SMTP server (e.g. smtp.gmail.com)" },
    ],
  },
  {
    name: "signal",
    who: "Phone numbers (E.164) or Signal UUIDs",
    fields: [
      { env: "SIGNAL_HTTP_URL", what: "signal-cli daemon's HTTP address", fallback: SIGNAL_DEFAULT_HTTP_URL },
      { env: "SIGNAL_ACCOUNT", what: "The bot's Signal number (E.164, e.g. +15551234567)" },
    ],
  },
  {
    name: "sms",
    who: "Phone numbers (E.164)",
    fields: [
      { env: "TWILIO_ACCOUNT_SID", what: "Twilio account SID (AC…)" },
      { env: "TWILIO_AUTH_TOKEN", what: "Twilio auth token", secret: true },
      { env: "TWILIO_PHONE_NUMBER", what: "The Twilio number the agent texts from (E.164)" },
    ],
  },
  {
    name: "mattermost",
    who: "User ids (26 characters) or @usernames",
    fields: [
      { env: "MATTERMOST_URL", what: "Mattermost server URL (e.g. https://mm.example.com)" },
      { env: "MATTERMOST_TOKEN", what: "The bot's access token (Integrations → Bot Accounts)", secret: true },
    ],
  },
  {
    name: "matrix",
    who: "Matrix ids (@user:server)",
    fields: [
      { env: "MATRIX_HOMESERVER", what: "Homeserver URL (e.g. https://matrix.example.org)" },
      { env: "MATRIX_ACCESS_TOKEN", what: "The bot account's access token", secret: true },
    ],
  },
  {
    name: "whatsapp_cloud",
    who: "Phone numbers (international, digits only)",
    fields: [
      { env: "WHATSAPP_CLOUD_ACCESS_TOKEN", what: "WhatsApp Cloud API access token", secret: true },
      { env: "WHATSAPP_CLOUD_PHONE_NUMBER_ID", what: "The sending number's phone number id" },
      {
        env: "WHATSAPP_CLOUD_APP_SECRET",
        what: "The Meta app's secret (checks webhook signatures)",
        secret: true,
      },
      {
        env: "WHATSAPP_CLOUD_VERIFY_TOKEN",
        what: "A verify token for Meta's webhook handshake",
        secret: true,
      },
    ],
  },
  {
    name: "homeassistant",
    who: "Home Assistant user ids",
    fields: [
      { env: "HASS_URL", what: "Home Assistant URL", fallback: "http://homeassistant.local:8123" },
      { env: "HASS_TOKEN", what: "A long-lived access token (your HA profile → Security)", secret: true },
    ],
  },
];

/** Chat platforms: their tokens and settings (into `.env`) and who may talk to the agent. */
export async function gatewaySection(ctx: SectionContext, p: Prompter): Promise<SectionEdits> {
  const edits = emptyEdits();
  p.say("Messaging platforms for `hermes gateway` (tokens are stored in .env, mode 0600):");
  for (const platform of PLATFORMS) {
    const current = (name: string) => (ctx.env[name] ?? "").trim() || undefined;
    const configured = platform.fields.every((f) => current(f.env) !== undefined);
    const wanted = await p.confirm(`${configured ? "Change" : "Set up"} ${platform.name}?`, false);
    if (!wanted) continue;
    for (const field of platform.fields) {
      const had = current(field.env);
      // An empty answer keeps what is there: a secret is never shown back, a setting is the default.
      const value = field.secret
        ? await p.secret(`${field.what}${had ? " (empty: keep the current one)" : ""}`)
        : await p.ask(field.what, had ?? field.fallback);
      // A pasted secret is written even when equal: it may have come from the process environment.
      if (value && (field.secret || value !== had)) edits.env.push({ name: field.env, value });
    }
    const allowed = `${platform.name.toUpperCase()}_ALLOWED_USERS`;
    const users = await p.ask(
      `${platform.who} allowed to talk to the agent on ${platform.name} (comma-separated; empty: pair with hermes pairing)`,
      current(allowed),
    );
    const list = users.replace(/\s+/g, "");
    if (list && list !== current(allowed)) edits.env.push({ name: allowed, value: list });
  }
  return edits;
}

/** Toolsets a user picks from: the single-purpose ones, not platform bundles or composites. */
export function pickableToolsets(): string[] {
  return Object.keys(TOOLSETS).filter(
    (name) => !name.startsWith("hermes-") && !TOOLSETS[name]?.includes?.length,
  );
}

/** The toolsets the CLI offers (`platform_toolsets.cli`), as a list of names. */
export async function toolsSection(ctx: SectionContext, p: Prompter): Promise<SectionEdits> {
  const edits = emptyEdits();
  const platform = ctx.config["platform_toolsets"];
  const currentList =
    typeof platform === "object" &&
    platform !== null &&
    Array.isArray((platform as Record<string, unknown>)["cli"])
      ? ((platform as Record<string, unknown>)["cli"] as unknown[]).filter(
          (x): x is string => typeof x === "string",
        )
      : ctx.config.toolsets;
  const names = pickableToolsets();
  p.say("Toolsets for the CLI:");
  for (const [i, name] of names.entries()) {
    p.say(`  ${String(i + 1).padStart(2)}. ${name.padEnd(16)} ${TOOLSETS[name]?.description ?? ""}`);
  }
  p.say("Type numbers or names separated by commas, or `all` (hermes-cli, everything).");
  for (;;) {
    const answer = await p.ask("Toolsets", currentList.join(","));
    const parsed = parseToolsetAnswer(answer, names);
    if (parsed.ok) {
      edits.config.push(["platform_toolsets.cli", JSON.stringify(parsed.toolsets)]);
      return edits;
    }
    p.say(parsed.message);
  }
}

/** Pure: `1,3,web` or `all` against the numbered `names`. */
export function parseToolsetAnswer(
  answer: string,
  names: readonly string[],
): { ok: true; toolsets: string[] } | { ok: false; message: string } {
  const words = answer
    .split(/[,\s]+/)
    .map((w) => w.trim())
    .filter(Boolean);
  if (words.length === 0) return { ok: false, message: "Choose at least one toolset." };
  if (words.length === 1 && words[0]?.toLowerCase() === "all") return { ok: true, toolsets: ["hermes-cli"] };
  const out: string[] = [];
  for (const word of words) {
    const name = /^\d+$/.test(word)
      ? names[Number(word) - 1]
      : Object.hasOwn(TOOLSETS, word)
        ? word
        : undefined;
    if (!name)
      return { ok: false, message: `"${word}" is not a toolset here (1-${names.length} or a name).` };
    if (!out.includes(name)) out.push(name);
  }
  return { ok: true, toolsets: out };
}

const EFFORTS = ["default", "none", "minimal", "low", "medium", "high", "xhigh"] as const;
const APPROVAL_MODES = ["manual", "smart", "off"] as const;

/** How the agent works: turn budget, reasoning effort, who approves dangerous commands. */
export async function agentSection(ctx: SectionContext, p: Prompter): Promise<SectionEdits> {
  const edits = emptyEdits();
  for (;;) {
    const turns = await p.ask(
      "Most tool-calling steps per turn (agent.max_turns)",
      String(ctx.config.agent.max_turns),
    );
    if (/^\d+$/.test(turns) && Number(turns) > 0) {
      edits.config.push(["agent.max_turns", turns]);
      break;
    }
    p.say("A whole number above 0.");
  }
  p.say("Reasoning effort (for models that think):");
  const effort = await choose(p, "Reasoning effort", EFFORTS, ctx.config.agent.reasoning_effort || "default");
  edits.config.push(["agent.reasoning_effort", effort === "default" ? "" : effort]);
  p.say(
    "Dangerous commands: manual (you approve), smart (an auxiliary model judges, asks when unsure), off:",
  );
  const mode = await choose(p, "Approval mode", APPROVAL_MODES, ctx.config.approvals.mode || "manual");
  edits.config.push(["approvals.mode", mode]);
  return edits;
}

/** Writes a section's edits: `.env` first (0600), then config.yaml. Returns one line per change. */
export function applyEdits(home: string, edits: SectionEdits): string[] {
  const lines: string[] = [];
  for (const { name, value } of edits.env) lines.push(`${name} → ${setEnvVar(home, name, value)}`);
  for (const [key, value] of edits.config) {
    const result = setConfigValue(home, key, value);
    lines.push(`${result.key}: ${value === "" ? '""' : value} → ${result.path}`);
  }
  return lines;
}
