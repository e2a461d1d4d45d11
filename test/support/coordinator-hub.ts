/**
 * Several `Coordinator`s sharing claims, leases, cron slots and messages in memory, for tests that
 * run two or three gateway instances in one process (the PostgreSQL coordinator answers the same
 * questions across processes).
 *
 *   const hub = coordinatorHub({ leaseTtlMs: 500 });
 *   const a = hub.join("a"), b = hub.join("b");
 *   await a.claimChat("chat");          // { claimed }
 *   await b.claimChat("chat");          // { heldBy: "a" }
 *   hub.kill("a");                       // a dies: its leases lapse after their TTL, its claims too
 *
 * Draining follows the contract: no new lease or cron slot, chat claims still granted. Cron slots
 * a dead runner left are not reclaimed here (`reclaimCronSlots` answers none); the PostgreSQL
 * coordinator's own tests cover that.
 *
 * A killed instance behaves as a dead process would from the others' side: it stops renewing, so
 * its leases and chat claims lapse after the TTL (its own `lost` signals fire then, standing in for
 * the process being gone), messages to it are dropped, and its calls reject.
 */
import {
  ChatClaimLostError,
  type ChatClaimResult,
  type CoordinationMessage,
  type Coordinator,
  type CronSlotClaim,
  type InstanceInfo,
  type Lease,
} from "../../src/state/coordination.js";

interface Held {
  holder: string;
  expiresAt: number;
  lost?: AbortController;
}

export interface HubOptions {
  /** How long a dead instance's leases and claims last (default 1000 ms). */
  leaseTtlMs?: number;
  /** How often `waitLease` tries again (default 25 ms). */
  pollMs?: number;
}

export interface HubCoordinator extends Coordinator {
  readonly alive: boolean;
}

export interface CoordinatorHub {
  join(id: string): HubCoordinator;
  /** The instance dies (as with SIGKILL): nothing it holds is renewed any more. */
  kill(id: string): void;
  /** Who holds a lease or a chat now (expired ones count as free). */
  leaseHolder(name: string): string | undefined;
  chatHolder(key: string): string | undefined;
  /** Every message sent or published, in order. */
  readonly log: Array<CoordinationMessage & { to: string }>;
}

export function coordinatorHub(options: HubOptions = {}): CoordinatorHub {
  const ttl = options.leaseTtlMs ?? 1000;
  const pollMs = options.pollMs ?? 25;
  const leases = new Map<string, Held>();
  const chats = new Map<string, Held>();
  const slots = new Map<string, Held & { done?: boolean }>();
  const members = new Map<
    string,
    { alive: boolean; draining: boolean; handlers: Set<(m: CoordinationMessage) => void>; startedAt: string }
  >();
  const log: Array<CoordinationMessage & { to: string }> = [];
  const handoffs = new Map<
    string,
    { sender: string; receiver: string; state: "sent" | "taken" | "withdrawn" }
  >();
  const now = () => Date.now();

  const live = (held: Held | undefined): held is Held => {
    if (!held) return false;
    if (members.get(held.holder)?.alive) return true;
    if (held.expiresAt > now()) return true;
    held.lost?.abort(new Error("lease lapsed"));
    return false;
  };

  const deliver = (to: string, message: CoordinationMessage) => {
    const member = members.get(to);
    log.push({ ...message, to });
    if (!member?.alive) return;
    // Through JSON, as a payload crossing processes would.
    const copy = JSON.parse(JSON.stringify(message)) as CoordinationMessage;
    setTimeout(() => {
      if (!member.alive) return;
      for (const handler of member.handlers) handler(copy);
    }, 1);
  };

  const join = (id: string): HubCoordinator => {
    const me = { alive: true, draining: false, handlers: new Set<(m: CoordinationMessage) => void>() };
    members.set(id, { ...me, startedAt: new Date().toISOString() });
    const self = () => members.get(id) as NonNullable<ReturnType<typeof members.get>>;
    const check = () => {
      if (!self().alive) throw new Error(`instance ${id} is dead`);
    };
    const takeLease = (name: string): Lease | null => {
      check();
      if (self().draining) return null;
      const current = leases.get(name);
      if (live(current)) return null;
      const lost = new AbortController();
      const held: Held = { holder: id, expiresAt: Number.POSITIVE_INFINITY, lost };
      leases.set(name, held);
      return {
        name,
        lost: lost.signal,
        release: async () => {
          if (leases.get(name) === held) leases.delete(name);
        },
      };
    };
    return {
      instanceId: id,
      shared: true,
      get alive() {
        return self().alive;
      },
      trackTurn: () => () => undefined,
      async claimChat(key): Promise<ChatClaimResult> {
        check();
        const current = chats.get(key);
        if (live(current)) return { heldBy: current.holder };
        const lost = new AbortController();
        const held: Held = { holder: id, expiresAt: Number.POSITIVE_INFINITY, lost };
        chats.set(key, held);
        const mine = () => chats.get(key) === held && self().alive;
        return {
          claimed: {
            key,
            lost: lost.signal,
            valid: mine,
            ensure: async () => {
              if (!mine()) throw new ChatClaimLostError(key, "taken over");
            },
            release: async () => {
              if (chats.get(key) === held) chats.delete(key);
            },
          },
        };
      },
      async tryLease(name) {
        return takeLease(name);
      },
      async waitLease(name, opts = {}) {
        for (;;) {
          if (opts.signal?.aborted) throw opts.signal.reason;
          if (self().draining) throw new Error(`not waiting for lease "${name}": instance ${id} is draining`);
          const lease = takeLease(name);
          if (lease) return lease;
          await new Promise((r) => setTimeout(r, pollMs));
        }
      },
      async claimCronSlot(jobId, slot): Promise<CronSlotClaim | null> {
        check();
        const key = `${jobId}\u0000${slot}`;
        const current = slots.get(key);
        if (self().draining || current?.done || live(current)) return null;
        const lost = new AbortController();
        const held = { holder: id, expiresAt: Number.POSITIVE_INFINITY, lost, done: false };
        slots.set(key, held);
        return {
          jobId,
          slot,
          attempt: 1,
          lost: lost.signal,
          finish: async () => {
            held.done = true;
          },
          release: async () => {
            if (slots.get(key) === held) slots.delete(key);
          },
        };
      },
      async reclaimCronSlots() {
        return [];
      },
      handoffs: {
        async offer(handoff, to) {
          check();
          if (!handoffs.has(handoff)) handoffs.set(handoff, { sender: id, receiver: to, state: "sent" });
        },
        async take(handoff) {
          check();
          const row = handoffs.get(handoff);
          if (!row || row.receiver !== id) return "withdrawn";
          if (row.state === "sent") {
            row.state = "taken";
            return "taken";
          }
          return row.state === "taken" ? "again" : "withdrawn";
        },
        async withdraw(handoff) {
          check();
          const row = handoffs.get(handoff);
          if (!row) return true;
          if (row.sender !== id || row.state !== "sent") return false;
          row.state = "withdrawn";
          return true;
        },
      },
      async send(to, topic, payload) {
        check();
        deliver(to, { topic, from: id, payload });
      },
      async publish(topic, payload) {
        check();
        for (const other of members.keys()) deliver(other, { topic, from: id, payload });
      },
      subscribe(handler) {
        self().handlers.add(handler);
        return () => self().handlers.delete(handler);
      },
      async instances(): Promise<InstanceInfo[]> {
        check();
        const list: InstanceInfo[] = [];
        for (const [other, member] of members) {
          if (!member.alive) continue;
          const holds = [...leases].filter(([, h]) => h.holder === other && live(h)).map(([n]) => n);
          list.push({
            id: other,
            host: "localhost",
            pid: process.pid,
            startedAt: member.startedAt,
            lastSeenAt: new Date().toISOString(),
            holds,
            draining: member.draining,
          });
        }
        return list;
      },
      async drain() {
        self().draining = true;
      },
      async close() {
        self().handlers.clear();
      },
    };
  };

  const kill = (id: string) => {
    const member = members.get(id);
    if (!member) return;
    member.alive = false;
    const until = now() + ttl;
    for (const table of [leases, chats, slots] as Array<Map<string, Held>>)
      for (const held of table.values()) if (held.holder === id) held.expiresAt = until;
    // The dead process's own view: its renewals stop, so its leases end once the TTL is over.
    setTimeout(() => {
      for (const table of [leases, slots] as Array<Map<string, Held>>)
        for (const held of table.values())
          if (held.holder === id) held.lost?.abort(new Error("lease lapsed"));
    }, ttl).unref?.();
  };

  return {
    join,
    kill,
    log,
    leaseHolder: (name) => {
      const held = leases.get(name);
      return live(held) ? held.holder : undefined;
    },
    chatHolder: (key) => {
      const held = chats.get(key);
      return live(held) ? held.holder : undefined;
    },
  };
}
