/**
 * The Honcho connection of one provider: the official `@honcho-ai/sdk` client (imported on first
 * network use, never at start-up), its peers, and the Honcho session each Hermes session maps to.
 * Identity rules follow upstream's resolver: a gateway user maps through `pinUserPeer`,
 * `userPeerAliases` and `runtimePeerPrefix`; a CLI session is `peerName`; with neither there is no
 * user peer and nothing is minted.
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";
import type { Honcho, Peer, Session } from "@honcho-ai/sdk";
import type { ProviderSessionInfo } from "../types.js";
import type { HonchoSettings } from "./config.js";

/** The SDK's module as the provider uses it; tests may hand in another loader. */
export type HonchoSdk = typeof import("@honcho-ai/sdk");
export type SdkLoader = () => Promise<HonchoSdk>;

/**
 * The SDK is required from node_modules (it is external to the CLI bundle: only Honcho users pay
 * for it and its zod); `require`, not `import()`, because the bundle runs in a vm.Script, where a
 * dynamic import has no loader. A failed load is retried on the next use.
 */
let sdkPromise: Promise<HonchoSdk> | undefined;
export const loadHonchoSdk: SdkLoader = () => {
  sdkPromise ??= new Promise<HonchoSdk>((resolve) => {
    const require = createRequire(import.meta.url);
    resolve(require("@honcho-ai/sdk") as HonchoSdk);
  }).catch((error: unknown) => {
    sdkPromise = undefined;
    throw error;
  });
  return sdkPromise;
};

/** Honcho ids allow letters, digits, `_` and `-` only. */
export function honchoId(raw: string): string {
  const id = raw.replace(/[^a-zA-Z0-9_-]+/g, "-").replace(/^-+|-+$/g, "");
  return id.slice(0, 100) || "hermes";
}

/** Pure: the user peer for a session, or undefined when none can be named (see the module doc). */
export function userPeerId(
  settings: HonchoSettings,
  raw: Record<string, unknown>,
  userId?: string,
): string | undefined {
  if (userId) {
    const pin = raw["pinUserPeer"] ?? raw["pinPeerName"];
    if (pin === true && settings.peerName) return honchoId(settings.peerName);
    const aliases = raw["userPeerAliases"];
    if (aliases && typeof aliases === "object" && !Array.isArray(aliases)) {
      const alias = (aliases as Record<string, unknown>)[userId];
      if (typeof alias === "string" && alias.trim()) return honchoId(alias);
    }
    const prefix = typeof raw["runtimePeerPrefix"] === "string" ? raw["runtimePeerPrefix"] : "";
    return honchoId(`${prefix}${userId}`);
  }
  return settings.peerName ? honchoId(settings.peerName) : undefined;
}

function gitRoot(cwd: string): string | undefined {
  let dir = cwd;
  for (;;) {
    if (existsSync(join(dir, ".git"))) return dir;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/**
 * Pure but for the file system (`per-repo` looks for `.git`): the Honcho session name. A manual
 * `sessions` entry for the directory wins; gateway chats get one session per chat user whatever
 * the strategy; then `per-session`, `per-repo`, `per-directory` or `global`.
 */
export function honchoSessionName(settings: HonchoSettings, info: ProviderSessionInfo): string {
  const manual = settings.sessions[info.cwd];
  if (manual) return honchoId(manual);
  if (info.platform !== "cli" && info.userId) return honchoId(`${info.platform}-${info.userId}`);
  switch (settings.sessionStrategy) {
    case "per-session":
      return honchoId(info.sessionId);
    case "global":
      return honchoId(settings.workspace);
    case "per-repo": {
      const root = gitRoot(info.cwd);
      return honchoId(basename(root ?? info.cwd));
    }
    default:
      return honchoId(basename(info.cwd));
  }
}

export interface Bound {
  client: Honcho;
  user: Peer;
  ai: Peer;
  session: Session;
}

/** One SDK client per provider; peers and sessions created once and reused. */
export class HonchoConnection {
  private client: Promise<Honcho> | undefined;
  private readonly peers = new Map<string, Promise<Peer>>();
  private readonly sessions = new Map<string, Promise<Session>>();

  constructor(
    private readonly settings: HonchoSettings,
    private readonly raw: Record<string, unknown>,
    private readonly loadSdk: SdkLoader = loadHonchoSdk,
  ) {}

  private connect(): Promise<Honcho> {
    this.client ??= this.loadSdk().then(
      (sdk) =>
        new sdk.Honcho({
          ...(this.settings.apiKey ? { apiKey: this.settings.apiKey } : {}),
          ...(this.settings.baseUrl ? { baseURL: this.settings.baseUrl } : {}),
          ...(this.settings.environment === "local" || this.settings.environment === "production"
            ? { environment: this.settings.environment }
            : {}),
          workspaceId: honchoId(this.settings.workspace),
          timeout: this.settings.timeoutSeconds * 1000,
          // One retry: a turn waits at most for the prefetch budget, and a write is not urgent.
          maxRetries: 1,
        }),
    );
    // A failed connection is retried on the next use, not remembered.
    this.client.catch(() => {
      this.client = undefined;
    });
    return this.client;
  }

  private peer(client: Honcho, id: string): Promise<Peer> {
    let peer = this.peers.get(id);
    if (!peer) {
      peer = client.peer(id);
      this.peers.set(id, peer);
      peer.catch(() => this.peers.delete(id));
    }
    return peer;
  }

  /** The client, both peers and the session for `info`; throws when no user peer can be named. */
  async bind(info: ProviderSessionInfo): Promise<Bound> {
    const userId = userPeerId(this.settings, this.raw, info.userId);
    if (!userId) {
      throw new Error(
        "Honcho has no user peer for this session: set peerName (hermes memory setup honcho --peer-name NAME).",
      );
    }
    const client = await this.connect();
    const aiId = honchoId(this.settings.aiPeer);
    const [user, ai] = await Promise.all([this.peer(client, userId), this.peer(client, aiId)]);
    const name = honchoSessionName(this.settings, info);
    let session = this.sessions.get(name);
    if (!session) {
      session = client.session(name, { peers: [userId, aiId] });
      this.sessions.set(name, session);
      session.catch(() => this.sessions.delete(name));
    }
    return { client, user, ai, session: await session };
  }
}
