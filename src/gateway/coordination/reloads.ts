/**
 * Reloads across instances: when something an instance caches changes, the process that changed it
 * publishes `reload.<kind>` on the coordinator and every instance, itself included, runs its
 * refresh for that kind. A refresh that is asked for again while it runs runs once more afterwards
 * (never two at once, none lost).
 *
 * One kind is cached: `webhooks`, each webhook server's route table (read from the database at most
 * every 2 s otherwise); the PostgreSQL subscriptions store announces every subscribe and remove.
 * The others need no topic here: skills have their own NOTIFY channel (`skill-watch.ts`, sent in
 * the transaction that changes them) and every new session reads the memory entries from the
 * database when it builds its prompt, so nothing holds a copy to drop.
 */
import type { Coordinator } from "../../state/coordination.js";

export const RELOAD_KINDS = ["webhooks"] as const;
export type ReloadKind = (typeof RELOAD_KINDS)[number];

/** The coordinator topic of a reload kind: `reload.webhooks`. */
export const reloadTopic = (kind: ReloadKind): string => `reload.${kind}`;

type Refresh = () => void | Promise<void>;

export class ReloadBus {
  private readonly handlers = new Map<ReloadKind, Set<Refresh>>();
  private readonly state = new Map<ReloadKind, { running?: Promise<void>; again: boolean }>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    this.unsubscribe = coordinator.subscribe((message) => {
      const kind = RELOAD_KINDS.find((k) => reloadTopic(k) === message.topic);
      if (kind) void this.run(kind);
    });
  }

  /** Runs `refresh` on every `reload.<kind>`; returns a function that stops it. */
  on(kind: ReloadKind, refresh: Refresh): () => void {
    const set = this.handlers.get(kind) ?? new Set<Refresh>();
    this.handlers.set(kind, set);
    set.add(refresh);
    return () => set.delete(refresh);
  }

  /** Tells every instance (this one too) to refresh `kind`. */
  announce(kind: ReloadKind): Promise<void> {
    return this.coordinator.publish(reloadTopic(kind), { kind });
  }

  /** Resolves once no refresh runs (tests, shutdown). */
  async settled(): Promise<void> {
    for (;;) {
      const running = [...this.state.values()].map((s) => s.running).filter(Boolean);
      if (running.length === 0) return;
      await Promise.allSettled(running);
    }
  }

  close(): void {
    this.unsubscribe();
  }

  private run(kind: ReloadKind): Promise<void> {
    const state = this.state.get(kind) ?? { again: false };
    this.state.set(kind, state);
    if (state.running) {
      state.again = true;
      return state.running;
    }
    state.running = (async () => {
      do {
        state.again = false;
        for (const refresh of this.handlers.get(kind) ?? []) {
          try {
            await refresh();
          } catch (error) {
            this.log(`reload ${kind}: ${error instanceof Error ? error.message : String(error)}`);
          }
        }
      } while (state.again);
    })().finally(() => {
      state.running = undefined;
    });
    return state.running;
  }
}
