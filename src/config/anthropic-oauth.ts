/**
 * `<home>/.anthropic_oauth.json`: Hermes's own Claude Pro/Max login (PKCE), in the shape Python
 * Hermes writes: `{"accessToken", "refreshToken", "expiresAt"}` with `expiresAt` in epoch
 * milliseconds. Unknown fields are kept on write; the file is 0600 and replaced atomically.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../util/atomic-write.js";

export interface AnthropicOAuthFile {
  accessToken: string;
  refreshToken: string | undefined;
  /** Epoch milliseconds; undefined when the file does not say. */
  expiresAt: number | undefined;
  /** Every field as read, for writing back what we do not know. */
  raw: Record<string, unknown>;
}

export function anthropicOAuthPath(home: string): string {
  return join(home, ".anthropic_oauth.json");
}

/** The stored login, or undefined when the file is missing, unreadable, not JSON, or has no token. */
export function readAnthropicOAuth(home: string): AnthropicOAuthFile | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(anthropicOAuthPath(home), "utf8"));
  } catch {
    return undefined;
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  const data = raw as Record<string, unknown>;
  const access = data["accessToken"] ?? data["access_token"];
  if (typeof access !== "string" || access.trim() === "") return undefined;
  const refresh = data["refreshToken"] ?? data["refresh_token"];
  const expires = data["expiresAt"];
  return {
    accessToken: access.trim(),
    refreshToken: typeof refresh === "string" && refresh.trim() !== "" ? refresh.trim() : undefined,
    expiresAt: typeof expires === "number" && Number.isFinite(expires) && expires > 0 ? expires : undefined,
    raw: data,
  };
}

/** Writes the login (0600, atomic), keeping fields of the previous file this module does not know. */
export async function writeAnthropicOAuth(
  home: string,
  login: { accessToken: string; refreshToken: string | undefined; expiresAt: number | undefined },
): Promise<void> {
  const previous = readAnthropicOAuth(home)?.raw ?? {};
  const data: Record<string, unknown> = {
    ...previous,
    accessToken: login.accessToken,
    refreshToken: login.refreshToken ?? null,
    expiresAt: login.expiresAt ?? 0,
  };
  await atomicWriteFile(anthropicOAuthPath(home), `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
}

/** Deletes the login file; true when there was one. */
export function removeAnthropicOAuth(home: string): boolean {
  try {
    rmSync(anthropicOAuthPath(home));
    return true;
  } catch {
    return false;
  }
}
