/**
 * Two gateway instances sharing one platform connection through a lease (test/unit/gateway/
 * coordination/leased-*.test.ts): each has its own home, the real adapter and a `LeasedConnection`
 * over an in-memory coordinator hub, and records what its connection hands it.
 *
 *   const leased = leasedInstances("slack", createSlackAdapter, () => env);
 *   afterEach(() => leased.stop());
 *   const { hub, holder, standby } = await leased.pair();   // one of them holds the lease
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, vi } from "vitest";
import { connectionLease, LeasedConnection } from "../../src/gateway/coordination/leased-connection.js";
import type { AdapterContext, InboundMessage, PlatformAdapter } from "../../src/gateway/platforms/types.js";
import { type CoordinatorHub, coordinatorHub, type HubCoordinator } from "./coordinator-hub.js";

/** A lease lasts this long once its holder stops renewing (the hub's and the connection's TTL). */
export const LEASE_TTL_MS = 1_000;

export interface LeasedInstance {
  id: string;
  adapter: PlatformAdapter;
  /** The messages this instance's connection handed to the gateway. */
  inbox: InboundMessage[];
  connection: LeasedConnection;
}

export function leasedInstances(
  platform: string,
  create: (ctx: AdapterContext) => PlatformAdapter,
  env: () => Record<string, string>,
) {
  const started: Array<{
    adapter: PlatformAdapter;
    connection: LeasedConnection;
    coordinator: HubCoordinator;
  }> = [];

  function instance(hub: CoordinatorHub, id: string): LeasedInstance {
    const home = mkdtempSync(join(tmpdir(), `hermes-${platform}-${id}-`));
    const adapter = create({
      home,
      env: env(),
      settings: {},
      mediaDir: join(home, "cache", "media"),
      maxInboundMediaBytes: 1024 * 1024,
    });
    const inbox: InboundMessage[] = [];
    const coordinator = hub.join(id);
    const lease = connectionLease(platform, env());
    if (!lease) throw new Error(`no ${platform} lease for this environment`);
    const connection = new LeasedConnection({
      coordinator,
      lease,
      adapter,
      handlers: { onMessage: (m) => inbox.push(m), onAction: () => undefined, onError: () => undefined },
      ttlMs: LEASE_TTL_MS,
    });
    started.push({ adapter, connection, coordinator });
    return { id, adapter, inbox, connection };
  }

  return {
    /** Starts instances "a" and "b" and answers once one of them holds the lease. */
    async pair(wait: { timeout: number; interval: number }) {
      const hub = coordinatorHub({ leaseTtlMs: LEASE_TTL_MS });
      const a = instance(hub, "a");
      const b = instance(hub, "b");
      await a.connection.start();
      await b.connection.start();
      await vi.waitFor(() => expect(a.connection.active || b.connection.active).toBe(true), wait);
      const [holder, standby] = a.connection.active ? [a, b] : [b, a];
      return { hub, holder, standby };
    },
    /** Hands every lease back (a killed instance's refusal aside) and disconnects every adapter. */
    async stop(): Promise<void> {
      const all = started.splice(0);
      for (const { connection, coordinator } of all)
        await connection.handOver().catch((err: unknown) => {
          if (coordinator.alive) throw err;
        });
      for (const { adapter } of all) await adapter.disconnect();
    },
  };
}
