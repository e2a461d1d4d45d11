/**
 * Claude Code's stored login (`~/.claude/.credentials.json`, `claudeAiOauth`), which Python Hermes
 * uses for the `anthropic` provider when no key is set: a Claude Pro/Max subscriber's OAuth access
 * token. Claude Code refreshes it; Hermes only reads it, again after a 401, so a token Claude Code
 * renewed in the meantime is picked up.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface ClaudeCodeToken {
  accessToken: string;
  /** Milliseconds since the epoch; undefined when the file does not say. */
  expiresAt: number | undefined;
  path: string;
}

/** Where Claude Code keeps its credentials for a home directory. */
export function claudeCodeCredentialsPath(userHome: string): string {
  return join(userHome, ".claude", ".credentials.json");
}

/**
 * The access token in Claude Code's credentials file under `userHome`, or undefined when there is
 * no file, it does not parse, it holds no token, or the token expired before `now`. Never throws.
 */
export function readClaudeCodeToken(userHome: string, now: number = Date.now()): ClaudeCodeToken | undefined {
  const path = claudeCodeCredentialsPath(userHome);
  let raw: string;
  try {
    raw = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const oauth = (data as { claudeAiOauth?: unknown } | null)?.claudeAiOauth;
  if (typeof oauth !== "object" || oauth === null) return undefined;
  const { accessToken, expiresAt } = oauth as { accessToken?: unknown; expiresAt?: unknown };
  if (typeof accessToken !== "string" || accessToken.trim() === "") return undefined;
  const expiry = typeof expiresAt === "number" && Number.isFinite(expiresAt) ? expiresAt : undefined;
  if (expiry !== undefined && expiry <= now) return undefined;
  return { accessToken: accessToken.trim(), expiresAt: expiry, path };
}
