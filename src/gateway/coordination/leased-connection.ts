/**
 * Connections a platform allows one consumer of (Telegram getUpdates, the Discord gateway, Slack
 * Socket Mode, signal-cli's event stream, IMAP IDLE, the Mattermost and Home Assistant sockets,
 * Matrix sync, a linked WhatsApp device) are held by one instance at a time under a coordinator
 * lease. Every instance connects such an adapter send-only, so it can answer the chats whose
 * turns it runs; the lease holder alone receives. When the lease is lost (renewal failed) the
 * holder stops receiving at once; when the holder dies another instance's `waitLease` gets the
 * lease once its TTL is over and starts receiving. Webhook-style inputs (API server, webhooks,
 * Slack's Events API, WhatsApp Cloud, Twilio) are served by every instance behind a load balancer.
 */
import { createHash } from "node:crypto";
import type { Coordinator, Lease } from "../../state/coordination.js";
import type { AdapterHandlers, FeedLedger, PlatformAdapter } from "../platforms/types.js";

/** A lease lasts this long without renewal: fail-over within 15 s of a holder's death. */
export const CONNECTION_LEASE_TTL_MS = 10_000;

const short = (value: string) => createHash("sha256").update(value).digest("hex").slice(0, 12);

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/**
 * The lease that guards a platform's receiving connection for this account, or undefined for a
 * webhook-style input every instance serves. Names carry no secret: a token is hashed (a Telegram
 * bot's numeric id is public and kept readable for `gateway status`).
 */
export function connectionLease(
  platform: string,
  env: Readonly<Record<string, string | undefined>>,
  config: Record<string, unknown> = {},
): string | undefined {
  const value = (name: string) => env[name]?.trim() ?? "";
  switch (platform) {
    case "telegram": {
      const token = value("TELEGRAM_BOT_TOKEN");
      const id = /^(\d+):/.exec(token)?.[1];
      return `telegram:${id ?? short(token)}`;
    }
    case "discord":
      return `discord:${short(value("DISCORD_BOT_TOKEN"))}:shard0`;
    case "slack": {
      const settings = {
        ...section(section(section(config["platforms"])["slack"])["extra"]),
        ...section(config["slack"]),
      };
      const mode = settings["mode"] ?? (value("SLACK_APP_TOKEN") ? "socket" : "http");
      return mode === "socket"
        ? `slack:${short(value("SLACK_APP_TOKEN") || value("SLACK_BOT_TOKEN"))}`
        : undefined;
    }
    case "signal":
      return `signal:${short(value("SIGNAL_ACCOUNT") || value("SIGNAL_HTTP_URL"))}`;
    case "email":
      return `email:${short(value("EMAIL_ADDRESS").toLowerCase())}`;
    case "mattermost":
      return `mattermost:${short(`${value("MATTERMOST_URL")} ${value("MATTERMOST_TOKEN")}`)}`;
    case "matrix":
      return `matrix:${short(value("MATRIX_USER_ID") || value("MATRIX_ACCESS_TOKEN"))}`;
    case "homeassistant":
      return `homeassistant:${short(value("HASS_URL") || value("HASS_TOKEN"))}`;
    case "whatsapp":
      return "whatsapp:linked-device";
    default:
      return undefined;
  }
}

export interface LeasedConnectionOptions {
  coordinator: Coordinator;
  lease: string;
  adapter: PlatformAdapter;
  handlers: AdapterHandlers;
  ttlMs?: number;
  /**
   * The feed's shared position and taken ids (Telegram), handed to the adapter when it starts
   * receiving, so a take-over neither re-reads nor re-hands what the last holder took.
   */
  feed?: FeedLedger;
  /** Receiving started (this instance holds the lease) or stopped. */
  onState?: (state: "receiving" | "standby") => void;
  log?: (line: string) => void;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    const cancel = () => {
      clearTimeout(timer);
      resolve();
    };
    signal.addEventListener("abort", cancel, { once: true });
  });

/** One platform connection: send-only always, receiving while this instance holds the lease. */
export class LeasedConnection {
  private readonly stopping = new AbortController();
  private loop: Promise<void> = Promise.resolve();
  private receiving = false;
  private readonly log: (line: string) => void;

  constructor(private readonly options: LeasedConnectionOptions) {
    this.log = options.log ?? (() => undefined);
  }

  /** Whether this instance receives now. */
  get active(): boolean {
    return this.receiving;
  }

  /** Connects send-only (rejects as `connect` does), then waits for the lease in the background. */
  async start(): Promise<void> {
    await this.options.adapter.connect(this.options.handlers, { receive: false });
    this.loop = this.run();
  }

  /**
   * Stops receiving and gives the lease up so another instance takes the connection over at once;
   * the adapter stays connected send-only for the replies of turns still running here.
   */
  async handOver(): Promise<void> {
    this.stopping.abort(new Error("handing over"));
    await this.loop;
  }

  private async run(): Promise<void> {
    const { coordinator, adapter, handlers } = this.options;
    const signal = this.stopping.signal;
    const ttlMs = this.options.ttlMs ?? CONNECTION_LEASE_TTL_MS;
    while (!signal.aborted) {
      let lease: Lease;
      try {
        lease = await coordinator.waitLease(this.options.lease, { ttlMs, signal });
      } catch (error) {
        if (signal.aborted) return;
        this.log(`could not wait for the ${this.options.lease} lease: ${String(error)}`);
        await sleep(1000, signal);
        continue;
      }
      try {
        if (!signal.aborted && !lease.lost.aborted) {
          await adapter.disconnect();
          await adapter.connect(handlers, this.options.feed ? { feed: this.options.feed } : undefined);
          this.receiving = true;
          this.options.onState?.("receiving");
          await new Promise<void>((resolve) => {
            if (lease.lost.aborted || signal.aborted) return resolve();
            lease.lost.addEventListener("abort", () => resolve(), { once: true });
            signal.addEventListener("abort", () => resolve(), { once: true });
          });
          if (lease.lost.aborted && !signal.aborted)
            this.log(`${adapter.platform}: the ${this.options.lease} lease was lost; receiving stops here`);
        }
      } catch (error) {
        this.log(
          `${adapter.platform}: could not start receiving: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      const started = this.receiving;
      await this.standby();
      this.receiving = false;
      await lease.release().catch(() => undefined);
      // A failed start waits a little before the lease is tried again (another instance may do better).
      if (!started && !signal.aborted) await sleep(1000, signal);
    }
  }

  /** Back to send-only: the receiving connection is closed before the lease is given up. */
  private async standby(): Promise<void> {
    const { adapter, handlers } = this.options;
    const was = this.receiving;
    try {
      await adapter.disconnect();
      await adapter.connect(handlers, { receive: false });
    } catch (error) {
      this.log(
        `${adapter.platform}: could not reconnect send-only: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (was) this.options.onState?.("standby");
  }
}
