/**
 * What the gateway process does to be one of several instances (issue 27 §3, §4), in one place
 * for the runner: the chat relay (one chat, one turn), leased receiving for single-consumer
 * platforms, reloads on `publish`, and the graceful drain on SIGTERM. With a coordinator that is
 * not shared (`localCoordinator()`, SQLite homes) it changes nothing: no relay, adapters connect
 * as they always have, and drain only marks the instance.
 */
import type { Coordinator } from "../../state/coordination.js";
import type { AdapterHandlers, PlatformAdapter } from "../platforms/types.js";
import { type CachedChats, ChatRelay, type HandlersFor } from "./chat-relay.js";
import { connectionLease, LeasedConnection } from "./leased-connection.js";
import { ReloadBus } from "./reloads.js";

export { ChatRelay } from "./chat-relay.js";
export { connectionLease, LeasedConnection } from "./leased-connection.js";
export { RELOAD_KINDS, ReloadBus, type ReloadKind, reloadTopic } from "./reloads.js";

export interface GatewayCoordinationOptions {
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  config: Record<string, unknown>;
  log?: (line: string) => void;
  /** A leased platform started or stopped receiving here (the control socket's platform state). */
  onReceiving?: (platform: string, receiving: boolean) => void;
}

export class GatewayCoordination {
  /** Only with a shared coordinator: the router runs as it always has without one. */
  readonly relay: ChatRelay | undefined;
  readonly reloads: ReloadBus;
  private readonly leased: LeasedConnection[] = [];
  private readonly log: (line: string) => void;
  private drained: Promise<void> | undefined;

  constructor(
    readonly coordinator: Coordinator,
    private readonly options: GatewayCoordinationOptions,
  ) {
    this.log = options.log ?? (() => undefined);
    this.relay = coordinator.shared
      ? new ChatRelay(coordinator, { home: options.home, log: (line) => this.log(line) })
      : undefined;
    this.reloads = new ReloadBus(coordinator, (line) => this.log(line));
  }

  /**
   * Connects a platform adapter: as before for a webhook-style platform or a lone instance;
   * send-only plus receiving under the platform's lease when several instances share the work.
   */
  async connect(adapter: PlatformAdapter, handlers: AdapterHandlers): Promise<void> {
    const lease = this.coordinator.shared
      ? connectionLease(adapter.platform, this.options.env, this.options.config)
      : undefined;
    if (!lease) return adapter.connect(handlers);
    const feed = this.coordinator.feedLedger?.(lease);
    const connection = new LeasedConnection({
      coordinator: this.coordinator,
      lease,
      adapter,
      handlers,
      ...(feed ? { feed } : {}),
      log: (line) => this.log(line),
      onState: (state) => {
        this.log(
          `${adapter.platform}: ${state === "receiving" ? `receiving here (lease ${lease})` : "standing by"}`,
        );
        this.options.onReceiving?.(adapter.platform, state === "receiving");
      },
    });
    await connection.start();
    this.leased.push(connection);
  }

  /** Starts taking messages other instances forward, into the router's handlers. */
  attach(handlers: HandlersFor, chats: CachedChats): void {
    this.relay?.attach(handlers, chats);
  }

  /**
   * SIGTERM's first step: the instance is marked draining (status shows it), claims no new chat
   * (new chats go to an instance that is not draining), and gives up its leases at once so
   * another instance takes the connections over; running turns then finish (the router's stop).
   */
  drain(): Promise<void> {
    this.drained ??= (async () => {
      this.relay?.drain();
      // Leases first: a draining coordinator refuses new ones, so the wait loops end here.
      await Promise.all(this.leased.map((c) => c.handOver()));
      await this.coordinator
        .drain()
        .catch((error: unknown) => this.log(`coordination: drain: ${String(error)}`));
    })();
    return this.drained;
  }

  /** After the router stopped: no more forwarded input or reloads. */
  async close(): Promise<void> {
    await this.drain();
    this.relay?.close();
    await this.reloads.settled();
    this.reloads.close();
  }
}
