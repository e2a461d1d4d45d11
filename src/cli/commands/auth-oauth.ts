/**
 * The OAuth side of `hermes auth` (and `hermes login` / `hermes logout`): log in to Nous Portal,
 * ChatGPT (Codex), Claude Pro/Max or GitHub Copilot, log out, and say which logins are stored.
 * Where each login is kept follows Python Hermes: auth.json `providers.<id>` for Nous and Codex,
 * `.anthropic_oauth.json` for Claude, COPILOT_GITHUB_TOKEN in `.env` for Copilot. Tokens are never
 * printed. The code to enter and the link go to stderr (they are a prompt); the outcome to stdout.
 */
import { createInterface } from "node:readline/promises";
import { finishAnthropicLogin, startAnthropicLogin } from "../../ai/oauth/anthropic.js";
import { codexCredential, codexDeviceLogin } from "../../ai/oauth/codex.js";
import { copilotDeviceLogin, copilotGithubToken, exchangeCopilotToken } from "../../ai/oauth/copilot.js";
import { nousDeviceLogin, nousExpiresAt } from "../../ai/oauth/nous.js";
import {
  type DeviceCodePrompt,
  defaultOAuthDeps,
  isOAuthProvider,
  OAUTH_PROVIDERS,
  type OAuthDeps,
  OAuthError,
  type OAuthProviderId,
} from "../../ai/oauth/types.js";
import { findProvider } from "../../ai/providers.js";
import {
  anthropicOAuthPath,
  readAnthropicOAuth,
  removeAnthropicOAuth,
  writeAnthropicOAuth,
} from "../../config/anthropic-oauth.js";
import {
  providerState,
  readAuthStore,
  removeProviderState,
  setProviderState,
  updateAuthStore,
} from "../../config/auth-store.js";
import { removeEnvVar, setEnvVar } from "../../config/env-file.js";
import { envPath } from "../../config/home.js";
import { CliFailure } from "../command.js";
import type { CliIo } from "../io.js";

export interface LoginCtx {
  home: string;
  /** The environment with `.env` underneath (endpoint overrides may live there). */
  env: Record<string, string | undefined>;
  config: Readonly<Record<string, unknown>> | undefined;
  io: CliIo;
  /** Replaces the real network, clock and sleep (tests). */
  deps?: OAuthDeps | undefined;
}

const NAMES: Record<OAuthProviderId, string> = {
  nous: "Nous Portal",
  "openai-codex": "ChatGPT (OpenAI Codex)",
  anthropic: "Claude Pro/Max (Anthropic)",
  copilot: "GitHub Copilot",
};

/** The OAuth provider a user typed (id or alias); exit 2 naming the ones that have a login. */
export function oauthProvider(raw: string): OAuthProviderId {
  const id = findProvider(raw)?.id ?? raw.trim().toLowerCase();
  if (isOAuthProvider(id)) return id;
  throw new CliFailure(
    `"${raw}" has no OAuth login. Providers with one: ${OAUTH_PROVIDERS.join(", ")}; for a key use: hermes auth add ${raw} --type api-key`,
    2,
  );
}

/** Runs the login for `provider` and stores it. Exit 0 when logged in. */
export async function oauthLogin(
  ctx: LoginCtx,
  provider: OAuthProviderId,
  flags: { timeout?: number | undefined },
): Promise<number> {
  const { io } = ctx;
  const deps = ctx.deps ?? defaultOAuthDeps(ctx.env);
  const options = flags.timeout !== undefined ? { timeoutS: flags.timeout } : {};
  io.err(`Logging in to ${NAMES[provider]}.`);
  try {
    if (provider === "nous" || provider === "openai-codex") {
      const state =
        provider === "nous"
          ? await nousDeviceLogin(deps, (p) => showCode(io, p), options)
          : await codexDeviceLogin(deps, (p) => showCode(io, p), options);
      await updateAuthStore(ctx.home, (data) => setProviderState(data, provider, state, { active: true }), {
        now: io.now,
      });
      io.out(
        `Logged in to ${NAMES[provider]}; the tokens are in ${ctx.home}/auth.json and renew themselves.`,
      );
    } else if (provider === "anthropic") {
      const start = startAnthropicLogin(ctx.env);
      io.err("Open this link, approve, and paste the code the page shows (it looks like code#state):");
      io.err(`  ${start.url}`);
      const pasted = await readLine(io, "Code: ");
      const tokens = await finishAnthropicLogin(pasted, start, deps);
      await writeAnthropicOAuth(ctx.home, tokens);
      io.out(
        `Logged in to ${NAMES.anthropic}; the tokens are in ${anthropicOAuthPath(ctx.home)} and renew themselves.`,
      );
    } else {
      const token = await copilotDeviceLogin(deps, (p) => showCode(io, p), options);
      setEnvVar(ctx.home, "COPILOT_GITHUB_TOKEN", token);
      io.out(`Logged in to GitHub; the token is saved as COPILOT_GITHUB_TOKEN in ${envPath(ctx.home)}.`);
      try {
        await exchangeCopilotToken(token, deps);
      } catch (error) {
        if (!(error instanceof OAuthError)) throw error;
        io.err(`warning: ${error.message}`);
      }
    }
  } catch (error) {
    if (error instanceof OAuthError)
      throw new CliFailure(`login to ${NAMES[provider]} failed: ${error.message}`, 1);
    throw error;
  }
  hintUse(ctx, provider);
  return 0;
}

/** Forgets the stored login for `provider`. Exit 0 whether or not there was one. */
export async function oauthLogout(ctx: LoginCtx, provider: OAuthProviderId): Promise<number> {
  const { io } = ctx;
  let removed: boolean;
  if (provider === "nous" || provider === "openai-codex") {
    removed = await updateAuthStore(ctx.home, (data) => removeProviderState(data, provider), { now: io.now });
  } else if (provider === "anthropic") {
    removed = removeAnthropicOAuth(ctx.home);
  } else {
    removed = removeEnvVar(ctx.home, "COPILOT_GITHUB_TOKEN");
  }
  if (!removed) {
    io.out(`Not logged in to ${NAMES[provider]}; nothing to remove.`);
  } else {
    io.out(`Logged out of ${NAMES[provider]}; its stored tokens are removed.`);
  }
  if (provider === "copilot") {
    const other = copilotGithubToken({ ...ctx.env, COPILOT_GITHUB_TOKEN: undefined });
    if (other) io.err(`note: ${other.source} is still set in the environment; Copilot keeps using it.`);
  }
  return 0;
}

/** The provider `hermes logout` means without one: auth.json's active login. */
export function activeLogin(ctx: LoginCtx): OAuthProviderId | undefined {
  const active = readAuthStore(ctx.home).data.active_provider;
  return typeof active === "string" && isOAuthProvider(active) ? active : undefined;
}

export interface LoginStatus {
  provider: OAuthProviderId;
  /** Where the login is kept. */
  where: string;
  /** Epoch seconds when the current bearer expires (it renews itself), if known. */
  expires_at: number | null;
  /** A refresh token is stored (false for Copilot, whose GitHub token does not expire). */
  refreshable: boolean;
}

/** The logins stored in this home (and Copilot's GitHub token from the environment). */
export function loginStatuses(ctx: LoginCtx): LoginStatus[] {
  const out: LoginStatus[] = [];
  const { data } = readAuthStore(ctx.home);
  const nous = providerState(data, "nous");
  if (nous?.["access_token"]) {
    out.push({
      provider: "nous",
      where: "auth.json",
      expires_at: nousExpiresAt(nous) ?? null,
      refreshable: Boolean(nous["refresh_token"]),
    });
  }
  const codex = providerState(data, "openai-codex");
  const codexCred = codex ? codexCredential(codex, ctx.env) : undefined;
  if (codex && codexCred) {
    const tokens = codex["tokens"] as Record<string, unknown>;
    out.push({
      provider: "openai-codex",
      where: "auth.json",
      expires_at: codexCred.expiresAt ?? null,
      refreshable: Boolean(tokens["refresh_token"]),
    });
  }
  const claude = readAnthropicOAuth(ctx.home);
  if (claude) {
    out.push({
      provider: "anthropic",
      where: ".anthropic_oauth.json",
      expires_at: claude.expiresAt !== undefined ? claude.expiresAt / 1000 : null,
      refreshable: claude.refreshToken !== undefined,
    });
  }
  const github = copilotGithubToken(ctx.env);
  if (github) out.push({ provider: "copilot", where: github.source, expires_at: null, refreshable: false });
  return out;
}

function showCode(io: CliIo, prompt: DeviceCodePrompt): void {
  const minutes = Math.max(1, Math.round(prompt.expiresIn / 60));
  if (prompt.verificationUriComplete) {
    io.err(`Open ${prompt.verificationUriComplete}`);
    io.err(`and check that it shows the code ${prompt.userCode}.`);
  } else {
    io.err(`Open ${prompt.verificationUri}`);
    io.err(`and enter the code ${prompt.userCode}`);
  }
  io.err(`Waiting for approval (the code expires in ${minutes} min; Ctrl+C cancels)…`);
}

/** How to make the new login the one Hermes uses, when config.yaml names another provider. */
function hintUse(ctx: LoginCtx, provider: OAuthProviderId): void {
  const model = ctx.config?.["model"];
  const configured =
    typeof model === "object" && model !== null ? (model as Record<string, unknown>)["provider"] : undefined;
  const current = typeof configured === "string" ? (findProvider(configured)?.id ?? configured) : undefined;
  if (current === provider) return;
  if ((provider === "nous" || provider === "openai-codex") && (current === undefined || current === "auto"))
    return;
  ctx.io.err(`To use it: hermes config set model.provider ${provider}`);
}

/** One line from the terminal (visible), or the first non-empty line of piped stdin. */
async function readLine(io: CliIo, prompt: string): Promise<string> {
  if (io.stdin.isTTY === true) {
    const rl = createInterface({ input: io.stdin, output: io.stderr });
    try {
      return (await rl.question(prompt)).trim();
    } finally {
      rl.close();
    }
  }
  io.err(prompt);
  const rl = createInterface({ input: io.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  try {
    for await (const line of rl) if (line.trim() !== "") return line.trim();
  } finally {
    rl.close();
  }
  return "";
}
