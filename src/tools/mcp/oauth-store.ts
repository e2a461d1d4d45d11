/**
 * Where MCP OAuth state lives, in upstream's layout: `<home>/mcp-tokens/<server>.json` (tokens,
 * with an absolute `expires_at` so a token that expired while Hermes was down reads as expired)
 * and `<server>.client.json` (the dynamic client registration). Files are 0600 from creation, the
 * folder 0700; writes are atomic so a refresh racing another process never leaves half a file.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { atomicWriteFileSync } from "../../util/atomic-write.js";

export const TOKEN_DIR = "mcp-tokens";

/** A server name made safe for a file name (upstream's rule: word characters and `-`). */
export function tokenFileStem(server: string): string {
  const stem = server
    .replace(/[^\w-]/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 128);
  return stem || "default";
}

export interface StoredTokens {
  tokens: OAuthTokens;
  /** Seconds since the epoch when the access token expires, when the server said. */
  expiresAt?: number;
}

/** One server's OAuth files. Never throws for a missing or corrupt file: it reads as absent. */
export class McpTokenStore {
  readonly dir: string;
  private readonly stem: string;

  constructor(
    home: string,
    readonly server: string,
    private readonly now: () => number = Date.now,
  ) {
    this.dir = join(home, TOKEN_DIR);
    this.stem = tokenFileStem(server);
  }

  get tokensPath(): string {
    return join(this.dir, `${this.stem}.json`);
  }

  get clientPath(): string {
    return join(this.dir, `${this.stem}.client.json`);
  }

  /** The stored tokens, `expires_in` counted from now (0 once expired); undefined when none. */
  readTokens(): StoredTokens | undefined {
    const data = readJson(this.tokensPath);
    if (!data || typeof data["access_token"] !== "string" || typeof data["token_type"] !== "string") {
      return undefined;
    }
    const { expires_at: expiresAt, hermes_issuer: issuer, ...rest } = data;
    const tokens = { ...rest } as Record<string, unknown>;
    if (typeof issuer === "string") tokens["issuer"] = issuer;
    if (typeof expiresAt === "number") {
      tokens["expires_in"] = Math.max(0, Math.floor(expiresAt - this.now() / 1000));
      return { tokens: tokens as unknown as OAuthTokens, expiresAt };
    }
    return { tokens: tokens as unknown as OAuthTokens };
  }

  /** Whether an access token is stored and past its expiry (false when it has none). */
  isExpired(): boolean {
    const stored = this.readTokens();
    return stored?.expiresAt !== undefined && stored.expiresAt <= this.now() / 1000;
  }

  writeTokens(tokens: OAuthTokens): void {
    const { issuer, ...rest } = tokens as OAuthTokens & { issuer?: string };
    const payload: Record<string, unknown> = { ...rest };
    if (typeof tokens.expires_in === "number") {
      payload["expires_at"] = Math.floor(this.now() / 1000) + tokens.expires_in;
    }
    if (issuer) payload["hermes_issuer"] = issuer;
    this.write(this.tokensPath, payload);
  }

  readClient(): OAuthClientInformationMixed | undefined {
    const data = readJson(this.clientPath);
    if (!data || typeof data["client_id"] !== "string") return undefined;
    return data as unknown as OAuthClientInformationMixed;
  }

  writeClient(info: OAuthClientInformationMixed): void {
    this.write(this.clientPath, info as unknown as Record<string, unknown>);
  }

  removeTokens(): boolean {
    return remove(this.tokensPath);
  }

  removeClient(): boolean {
    return remove(this.clientPath);
  }

  private write(path: string, data: Record<string, unknown>): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // An existing folder made by something else may be wider; tokens are secrets.
    chmodSync(this.dir, 0o700);
    atomicWriteFileSync(path, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
  }
}

function readJson(path: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8").replace(/^\uFEFF/, ""));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function remove(path: string): boolean {
  try {
    rmSync(path);
    return true;
  } catch {
    return false;
  }
}
