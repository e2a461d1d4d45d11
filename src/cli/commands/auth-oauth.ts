/**
 * The OAuth side of `hermes auth` (and `hermes login` / `hermes logout`): log in to Nous Portal,
 * ChatGPT (Codex), Claude Pro/Max or GitHub Copilot, log out, and say which logins are stored.
 * Where each login is kept follows Python Hermes: auth.json `providers.<id>` for Nous and Codex,
 * `.anthropic_oauth.json` for Claude, COPILOT_GITHUB_TOKEN in `.env` for Copilot. Tokens are never
 * printed. The code to enter and the link go to stderr (they are a prompt); the outcome to stdout.
 */
import { createInterface } from "node:readline/promises";
import { finishAnthropicLogin, startAnthropicLogin } from "../../ai/oauth/anthropic.js";
import { codexDeviceLogin } from "../../ai/oauth/codex.js";
import { copilotDeviceLogin, copilotGithubToken, exchangeCopilotToken } from "../../ai/oauth/copilot.js";
import { type MinimaxRegion, minimaxLogin } from "../../ai/oauth/minimax.js";
import { nousDeviceLogin } from "../../ai/oauth/nous.js";
import { poolEntryFromLogin } from "../../ai/oauth/pool-entry.js";
import { qwenDeviceLogin } from "../../ai/oauth/qwen.js";
import { qwenCliCredsPath, readQwenCliState } from "../../ai/oauth/qwen-cli.js";
import { STORED_LOGIN_FLOWS } from "../../ai/oauth/source.js";
import {
  type DeviceCodePrompt,
  defaultOAuthDeps,
  isOAuthProvider,
  isStoredLoginProvider,
  OAUTH_PROVIDERS,
  type OAuthDeps,
  OAuthError,
  type OAuthProviderId,
  STORED_LOGIN_PROVIDERS,
  type StoredLoginProvider,
} from "../../ai/oauth/types.js";
import { xaiDeviceLogin } from "../../ai/oauth/xai.js";
import { findProvider } from "../../ai/providers.js";
import {
  anthropicOAuthPath,
  readAnthropicOAuth,
  removeAnthropicOAuth,
  writeAnthropicOAuth,
} from "../../config/anthropic-oauth.js";
import {
  newEntryId,
  poolList,
  poolRecords,
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
  "xai-oauth": "xAI Grok (SuperGrok / Premium+)",
  "qwen-oauth": "Qwen",
  "minimax-oauth": "MiniMax",
};

export interface LoginFlags {
  timeout?: number | undefined;
  /** MiniMax only: `global` (minimax.io, default) or `cn` (minimaxi.com). */
  region?: string | undefined;
  /**
   * `hermes auth add`: when the provider already has a login, store this one as another entry of
   * its credential pool (rotated with the first) instead of replacing it.
   */
  addToPool?: boolean | undefined;
  /** The pool entry's label (default `<provider>-oauth-N`). */
  label?: string | undefined;
}

/** Runs the flow of a login kept in auth.json and returns the state to store. */
function runStoredLogin(
  provider: StoredLoginProvider,
  deps: OAuthDeps,
  io: CliIo,
  flags: LoginFlags,
): Promise<Record<string, unknown>> {
  const show = (p: DeviceCodePrompt) => showCode(io, p);
  const options = flags.timeout !== undefined ? { timeoutS: flags.timeout } : {};
  switch (provider) {
    case "nous":
      return nousDeviceLogin(deps, show, options);
    case "openai-codex":
      return codexDeviceLogin(deps, show, options);
    case "xai-oauth":
      return xaiDeviceLogin(deps, show, options);
    case "qwen-oauth":
      return qwenDeviceLogin(deps, show, options);
    case "minimax-oauth":
      return minimaxLogin(deps, show, { ...options, region: minimaxRegion(flags.region) });
  }
}

function minimaxRegion(raw: string | undefined): MinimaxRegion {
  const region = (raw ?? "global").trim().toLowerCase();
  if (region === "global" || region === "cn") return region;
  throw new CliFailure(`--region ${raw}: expected global (minimax.io) or cn (minimaxi.com).`, 2);
}

/**
 * Stores a fresh login: as `providers[id]` (made active), or, when `addToPool` and a login is
 * already stored, as a new `oauth` entry of the provider's pool. Returns the pool entry's
 * 1-based position and label when it went there.
 */
async function storeLogin(
  ctx: LoginCtx,
  provider: StoredLoginProvider,
  state: Record<string, unknown>,
  flags: LoginFlags,
): Promise<{ index: number; label: string } | undefined> {
  const baseUrl =
    STORED_LOGIN_FLOWS[provider].credentialOf(state, ctx.env)?.baseUrl ?? findProvider(provider)?.baseUrl;
  return updateAuthStore(
    ctx.home,
    (data) => {
      if (!flags.addToPool || !providerState(data, provider)) {
        setProviderState(data, provider, state, { active: true });
        return undefined;
      }
      const records = poolRecords(data, provider);
      const labels = new Set(records.map((r) => r.label));
      let label = flags.label?.trim() ?? "";
      for (let n = records.length + 1; label === ""; n++) {
        if (!labels.has(`${provider}-oauth-${n}`)) label = `${provider}-oauth-${n}`;
      }
      const entry = poolEntryFromLogin(provider, state, { id: newEntryId(), label, baseUrl });
      entry.priority = Math.max(-1, ...records.map((r) => r.priority)) + 1;
      const list = poolList(data, provider, true);
      list.push(entry);
      return { index: records.length + 1, label };
    },
    { now: ctx.io.now },
  );
}

/** The OAuth provider a user typed (id or alias); exit 2 naming the ones that have a login. */
export function oauthProvider(raw: string): OAuthProviderId {
  const known = findProvider(raw);
  const id = known?.id ?? raw.trim().toLowerCase();
  if (isOAuthProvider(id)) return id;
  // A key is the way in only for a provider the catalog knows; an unknown name gets no command to copy.
  const instead = known
    ? `; for a key use: hermes auth add ${known.id} --type api-key`
    : `; "${raw}" is not a provider Hermes knows`;
  throw new CliFailure(
    `"${raw}" has no OAuth login. Providers with one: ${OAUTH_PROVIDERS.join(", ")}${instead}`,
    2,
  );
}

/** Runs the login for `provider` and stores it. Exit 0 when logged in. */
export async function oauthLogin(
  ctx: LoginCtx,
  provider: OAuthProviderId,
  flags: LoginFlags,
): Promise<number> {
  const { io } = ctx;
  const deps = ctx.deps ?? defaultOAuthDeps(ctx.env);
  io.err(`Logging in to ${NAMES[provider]}.`);
  try {
    if (isStoredLoginProvider(provider)) {
      const state = await runStoredLogin(provider, deps, io, flags);
      const pooled = await storeLogin(ctx, provider, state, flags);
      if (pooled) {
        io.out(
          `Added ${provider} OAuth credential #${pooled.index} "${pooled.label}" to the pool; it rotates with the existing login (hermes auth list ${provider}).`,
        );
        return 0;
      }
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
      const options = flags.timeout !== undefined ? { timeoutS: flags.timeout } : {};
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
  if (isStoredLoginProvider(provider)) {
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
  for (const provider of STORED_LOGIN_PROVIDERS) {
    const state = providerState(data, provider);
    const credential = state ? STORED_LOGIN_FLOWS[provider].credentialOf(state, ctx.env) : undefined;
    if (!state || !credential) continue;
    const tokens = typeof state["tokens"] === "object" && state["tokens"] !== null ? state["tokens"] : state;
    out.push({
      provider,
      where: "auth.json",
      expires_at: credential.expiresAt ?? null,
      refreshable: Boolean((tokens as Record<string, unknown>)["refresh_token"]),
    });
  }
  if (!out.some((s) => s.provider === "qwen-oauth")) {
    // No Qwen login of Hermes's own: the Qwen CLI's file stands in for it (qwen-cli.ts).
    const state = (() => {
      try {
        return readQwenCliState(ctx.env);
      } catch {
        return undefined;
      }
    })();
    const credential = state ? STORED_LOGIN_FLOWS["qwen-oauth"].credentialOf(state, ctx.env) : undefined;
    if (state && credential) {
      out.push({
        provider: "qwen-oauth",
        where: qwenCliCredsPath(ctx.env),
        expires_at: credential.expiresAt ?? null,
        refreshable: typeof state["refresh_token"] === "string" && state["refresh_token"] !== "",
      });
    }
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
  if (isStoredLoginProvider(provider) && (current === undefined || current === "auto")) return;
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
