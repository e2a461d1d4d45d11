/**
 * One chat, one turn, across gateway instances. The router asks the relay before it handles a
 * message (`admit`) and before it runs turns (`hold`): this instance claims the chat through the
 * `Coordinator`, or learns which instance holds it and forwards the message there (`chat.input`),
 * where that instance's router handles it exactly as if it had arrived there: queued, steered or
 * interrupting per `display.busy_input_mode`, approval answers and `/stop` reaching the running
 * turn. A button press for a chat held elsewhere goes the same way (`chat.action`).
 *
 * Claims are counted per chat inside this process (a message being handled, a running pump), and
 * the chat is released when the last of them ends: after the turn and its queued follow-ups.
 * While the instance drains, chats it does not hold go to a live instance that is not draining,
 * and input forwarded to it is passed on once its own turn has ended.
 *
 * Claims are fenced (state/coordination.ts `ChatClaim`): a turn's session writes, tool runs,
 * approval prompts and chat output pass a gate first (`fenceSession`, `fenceIndex`, `fence`), and
 * a claim lost to another instance (this one stalled or lost the database past the TTL) stops the
 * turn as `/stop` would: nothing more is written or sent, and what waits here goes to the holder.
 *
 * Only used with a shared coordinator: with `localCoordinator()` the router runs as it always has.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import {
  type ChatClaim,
  ChatClaimLostError,
  type CoordinationMessage,
  type Coordinator,
  type HandoffLedger,
} from "../../state/coordination.js";
import type { RouteTicket } from "../messaging/router-types.js";
import type { AdapterHandlers, InboundAction, InboundMessage, PlatformAdapter } from "../platforms/types.js";
import { type FencedParts, fenceAdapter, fenceIndexWrites, fenceParts, type Gate } from "./chat-fence.js";
import {
  actionToWire,
  type ChatInputPayload,
  fromWire,
  isChatAction,
  isChatInput,
  toWire,
} from "./relay-wire.js";

/** Forwarded this many times, a message waits for the chat to be free instead of moving on. */
const MAX_HOPS = 4;
/** How long a forwarded message waits for the receiving instance's receipt before it is routed again. */
const RECEIPT_WAIT_MS = 3_000;
/** How long a message that went round too often waits for its chat, and how often it asks. */
const SETTLE_WAIT_MS = 30_000;
const RETRY_MS = 100;

/** Where a forwarded message ended: taken by the receiver (in time or late), back here, or this instance closed. */
type ForwardOutcome = "received" | "late" | "withdrawn" | "closed";

export interface RelayOptions {
  home: string;
  /** One line per problem (stderr and gateway.log). */
  log?: (line: string) => void;
  /** How long a forwarded message waits for its receipt (default 3 s). */
  receiptWaitMs?: number;
}

/** What the router's handlers look like to the relay (`MessageRouter.handlersFor`). */
export type HandlersFor = (platform: string) => Pick<AdapterHandlers, "onMessage" | "onAction"> | undefined;

/**
 * The router's cached agents: a chat claimed afresh may have had turns on another instance since
 * this one last ran it, so a cached agent whose stored session grew or changed is dropped and the
 * next turn reopens it from the shared store.
 */
export interface CachedChats {
  cached(key: string): Promise<
    | {
        chat: { readonly id: string; loadRecord(): Promise<{ messageCount: number } | null> };
        current?: string;
      }
    | undefined
  >;
  forget(key: string): void;
}

interface Held {
  claim: ChatClaim;
  refs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ChatRelay {
  private readonly held = new Map<string, Held>();
  private readonly claiming = new Map<string, Promise<ChatClaim | string>>();
  private readonly releasing = new Map<string, Promise<void>>();
  /** Hops of messages that were forwarded here, so passing one on again counts. */
  private readonly hops = new WeakMap<InboundMessage, number>();
  /** Forwarded messages waiting for the receiving instance's receipt, by id. */
  private readonly receipts = new Map<string, () => void>();
  /** Per chat, the forwarded messages being taken here, in arrival order. */
  private readonly inbound = new Map<string, Promise<void>>();
  /** Per chat, the end of the routing order of messages that arrived here (`enter`). */
  private readonly order = new Map<string, Promise<void>>();
  private readonly handoffs: HandoffLedger;
  private handlers: HandlersFor | undefined;
  private chats: CachedChats | undefined;
  /** What each chat's stored session looked like when this instance last let it go. */
  private readonly lastSeen = new Map<string, { id: string; count: number }>();
  /** Per chat, how many of its claims this instance lost so far (a gate made before a loss refuses for good). */
  private readonly losses = new Map<string, number>();
  /** Chats lost and not claimed here again since. */
  private readonly lostKeys = new Set<string>();
  private unsubscribe: (() => void) | undefined;
  private draining = false;
  private closed = false;
  private readonly log: (line: string) => void;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly options: RelayOptions,
  ) {
    this.log = options.log ?? (() => undefined);
    if (!coordinator.handoffs) throw new Error("the chat relay needs a coordinator with a handoff ledger");
    this.handoffs = coordinator.handoffs;
  }

  /** Starts taking messages forwarded by other instances into the router. */
  attach(handlers: HandlersFor, chats?: CachedChats): void {
    this.handlers = handlers;
    this.chats = chats;
    this.unsubscribe ??= this.coordinator.subscribe((message) => this.onMessage(message));
  }

  /** Whether this instance holds the chat now. */
  holds(key: string): boolean {
    return this.held.has(key);
  }

  /**
   * Takes a place in `key`'s routing order, synchronously as a message arrives: its routing starts
   * once the messages that arrived before it were admitted here or received by the chat's holder.
   * A message passed round again (its holder died) keeps its place, so a newer message from the
   * same chat never overtakes it, and a message handed on again by a feed stays ahead of the ones
   * read after it.
   */
  enter(key: string): RouteTicket {
    const before = this.order.get(key) ?? Promise.resolve();
    let finish: () => void = () => undefined;
    const mine = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const tail = before.then(() => mine);
    this.order.set(key, tail);
    void tail.then(() => {
      if (this.order.get(key) === tail) this.order.delete(key);
    });
    return { turn: before, done: () => finish() };
  }

  /**
   * Before the router handles a message: a release function (call it when done) when it is to be
   * handled here, null when the instance running its chat took it. A message the holder does not
   * confirm (it died, or all is slow) is taken back and routed again, in its place.
   */
  async admit(key: string, message: InboundMessage, ticket?: RouteTicket): Promise<(() => void) | null> {
    const place = ticket ?? this.enter(key);
    try {
      await place.turn;
      return await this.route(key, message);
    } finally {
      // The router queues a message admitted here in the task that reads this result: the next
      // message of the chat is routed after that.
      setImmediate(place.done);
    }
  }

  /**
   * Admits `message` here or passes it to the chat's holder, again until one took it: a copy taken
   * back from a holder that did not confirm it is still here, so it does not count as a hop.
   */
  private async route(key: string, message: InboundMessage): Promise<(() => void) | null> {
    const hops = this.hops.get(message) ?? 0;
    for (;;) {
      const to = await this.destination(key, hops);
      if (typeof to !== "string") return to;
      const platform = message.source.platform;
      const outcome = await this.forward(to, key, message, hops);
      if (outcome !== "withdrawn" || this.closed) return null;
      this.log(
        `coordination: instance ${to} did not confirm a ${platform} message for ${key}; routing it again`,
      );
    }
  }

  /** A release when this instance runs `key` now, or the instance a message for it goes to. */
  private async destination(key: string, hops: number): Promise<(() => void) | string> {
    if (this.draining && !this.held.has(key)) {
      const peer = await this.peer();
      if (peer) return peer;
    }
    const got = await this.acquire(key);
    if (typeof got !== "string" || hops < MAX_HOPS) return got;
    // Passed round too often (holders changing under it): wait here until the chat is free.
    const end = Date.now() + SETTLE_WAIT_MS;
    let holder = got;
    while (Date.now() < end && !this.closed) {
      await sleep(RETRY_MS);
      const again = await this.acquire(key);
      if (typeof again !== "string") return again;
      holder = again;
    }
    return holder;
  }

  /**
   * Before the router runs turns for a chat: a release function when this instance holds it, null
   * when another does, in which case the messages waiting in `queue` were forwarded there (and
   * taken out of it).
   */
  async hold(key: string, queue: InboundMessage[]): Promise<(() => void) | null> {
    const got = this.draining && !this.held.has(key) ? await this.peer() : undefined;
    const result = got ?? (await this.acquire(key));
    if (typeof result !== "string") return result;
    // Routed again from the router's door, in arrival order, each to wherever its chat runs then.
    const handlers = this.handlers;
    for (const message of queue.splice(0)) handlers?.(message.source.platform)?.onMessage(message);
    return null;
  }

  /** A button press this instance could not answer: true when it went to the chat's holder. */
  async forwardAction(key: string, platform: string, action: InboundAction): Promise<boolean> {
    if (this.held.has(key)) return false;
    const got = await this.acquire(key);
    if (typeof got !== "string") {
      got();
      return false;
    }
    await this.coordinator.send(got, "chat.action", actionToWire(key, platform, action));
    await action.acknowledge?.().catch(() => undefined);
    return true;
  }

  /**
   * The gate for `key`'s effects now: passes at once while this instance holds the chat with a
   * valid claim (or does not hold it: nothing to fence), waits while the claim is confirmed,
   * refuses once the chat was lost and not claimed here again.
   */
  gate(key: string): Promise<void> | undefined {
    if (this.lostKeys.has(key))
      return Promise.reject(new ChatClaimLostError(key, "another instance runs it now"));
    const entry = this.held.get(key);
    return !entry || entry.claim.valid() ? undefined : entry.claim.ensure();
  }

  /** `gate(key)`, refusing for good once a claim of `key` made before the call was lost. */
  gateFrom(key: string): Gate {
    const since = this.losses.get(key) ?? 0;
    return () =>
      (this.losses.get(key) ?? 0) === since
        ? this.gate(key)
        : Promise.reject(new ChatClaimLostError(key, "it was lost while this conversation was open here"));
  }

  /**
   * The store, tool registry and approval prompt a conversation's agent is opened with, fenced:
   * once this instance loses the chat, that agent writes, runs and asks nothing more.
   */
  fenceSession<S extends object, R extends object>(key: string, parts: FencedParts<S, R>): FencedParts<S, R> {
    // Session writes also carry the claim held now, checked by the database (PostgreSQL).
    return fenceParts(parts, this.gateFrom(key), () => this.held.get(key)?.claim);
  }

  /**
   * The chat → session index with its writes gated per chat (the key is their first argument),
   * each also carrying the claim held for its chat now, checked by the database (PostgreSQL).
   */
  fenceIndex<T extends object>(index: T): T {
    return fenceIndexWrites(
      index,
      (key) => this.gate(key),
      (key) => this.held.get(key)?.claim,
    );
  }

  /**
   * For turns about to run for `key` (held here): the adapter their output goes out on, gated on
   * the claim, and the claim's `lost` signal; `stop` is called once if the claim is lost.
   */
  fence(
    key: string,
    adapter: PlatformAdapter,
    stop: () => void,
  ): { adapter: PlatformAdapter; lost: AbortSignal } {
    const lost = this.held.get(key)?.claim.lost ?? new AbortController().signal;
    lost.addEventListener("abort", stop, { once: true });
    return { adapter: fenceAdapter(adapter, this.gateFrom(key)), lost };
  }

  private onLost(key: string, entry: Held): void {
    this.losses.set(key, (this.losses.get(key) ?? 0) + 1);
    if (this.held.get(key) !== entry) return;
    this.held.delete(key);
    this.lostKeys.add(key);
    this.log(
      `coordination: chat ${key} was taken over by another instance (${String((entry.claim.lost.reason as Error)?.message ?? "")}); its turn here stops, writing and sending nothing more`,
    );
  }

  /** Stops claiming chats this instance does not already run (graceful drain). */
  drain(): void {
    this.draining = true;
  }

  close(): void {
    this.closed = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Claims `key` (counted), or names the instance holding it. */
  private async acquire(key: string): Promise<(() => void) | string> {
    for (;;) {
      const mine = this.held.get(key);
      if (mine) return this.ref(key, mine);
      const pending = this.claiming.get(key);
      if (pending) {
        await pending.catch(() => undefined);
        continue;
      }
      await this.releasing.get(key);
      const claiming = this.claim(key);
      this.claiming.set(key, claiming);
      let result: ChatClaim | string;
      try {
        result = await claiming;
      } finally {
        this.claiming.delete(key);
      }
      if (typeof result === "string") return result;
      const entry = { claim: result, refs: 0 };
      this.held.set(key, entry);
      this.lostKeys.delete(key);
      result.lost.addEventListener("abort", () => this.onLost(key, entry), { once: true });
      const release = this.ref(key, entry);
      await this.dropIfMoved(key);
      return release;
    }
  }

  private async claim(key: string): Promise<ChatClaim | string> {
    // Our own claim still on record (a release that has not reached the database yet): ask again.
    for (let attempt = 0; ; attempt++) {
      const result = await this.coordinator.claimChat(key);
      if ("claimed" in result) return result.claimed;
      if (result.heldBy !== this.coordinator.instanceId || attempt >= 20) return result.heldBy;
      await sleep(RETRY_MS);
    }
  }

  private ref(key: string, entry: Held): () => void {
    entry.refs++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      entry.refs--;
      if (entry.refs > 0 || this.held.get(key) !== entry) return;
      this.held.delete(key);
      const released = this.remember(key)
        .then(() => entry.claim.release())
        .catch((error: unknown) => this.log(`coordination: could not release chat ${key}: ${String(error)}`))
        .finally(() => {
          if (this.releasing.get(key) === released) this.releasing.delete(key);
        });
      this.releasing.set(key, released);
    };
  }

  private async remember(key: string): Promise<void> {
    const cached = await this.chats?.cached(key);
    if (!cached) return void this.lastSeen.delete(key);
    const count = (await cached.chat.loadRecord())?.messageCount ?? 0;
    this.lastSeen.set(key, { id: cached.chat.id, count });
  }

  private async dropIfMoved(key: string): Promise<void> {
    try {
      const cached = await this.chats?.cached(key);
      if (!cached) return;
      const seen = this.lastSeen.get(key);
      const count = (await cached.chat.loadRecord())?.messageCount ?? 0;
      const moved =
        !seen || seen.id !== cached.chat.id || cached.current !== cached.chat.id || seen.count !== count;
      if (moved) this.chats?.forget(key);
    } catch (error) {
      this.log(`coordination: could not compare chat ${key} with the store: ${String(error)}`);
      this.chats?.forget(key);
    }
  }

  /** A live instance that is not draining, other than this one. */
  private async peer(): Promise<string | undefined> {
    try {
      const all = await this.coordinator.instances();
      return all.find((i) => i.id !== this.coordinator.instanceId && !i.draining)?.id;
    } catch {
      return undefined;
    }
  }

  /**
   * Sends the message to `to` under a fresh handoff id and waits for its receipt. Without one in
   * time (the holder died, the message was lost on the way, or all is just slow) the sender asks
   * the shared ledger to take it back: when it can (`"withdrawn"`), nobody took it and the caller
   * routes it again, so it reaches whoever holds the chat once a dead holder's claim lapses; when
   * it cannot (`"late"`), the receiver took it and handles it. Never dropped, never handled twice.
   */
  private async forward(
    to: string,
    key: string,
    message: InboundMessage,
    hops: number,
  ): Promise<ForwardOutcome> {
    const platform = message.source.platform;
    const id = randomBytes(8).toString("hex");
    const payload: ChatInputPayload = { key, platform, message: await toWire(message), hops: hops + 1, id };
    const receipt = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => {
        this.receipts.delete(id);
        resolve(false);
      }, this.options.receiptWaitMs ?? RECEIPT_WAIT_MS);
      this.receipts.set(id, () => {
        clearTimeout(timer);
        this.receipts.delete(id);
        resolve(true);
      });
    });
    try {
      await this.handoffs.offer(id, to);
      await this.coordinator.send(to, "chat.input", payload);
    } catch (error) {
      this.log(`coordination: could not pass a ${platform} message to instance ${to}: ${String(error)}`);
    }
    if (await receipt) return "received";
    if (this.closed) return "closed";
    const back = await this.withdraw(id);
    if (back === undefined) return "closed";
    if (back) return "withdrawn";
    this.log(`coordination: instance ${to} took a ${platform} message for ${key}; its receipt was late`);
    return "late";
  }

  /** Takes a forwarded message back; undefined when this instance closed before the ledger answered. */
  private async withdraw(id: string): Promise<boolean | undefined> {
    for (let pause = RETRY_MS; ; pause = Math.min(pause * 2, 5_000)) {
      try {
        return await this.handoffs.withdraw(id);
      } catch (error) {
        if (this.closed) return undefined;
        this.log(`coordination: could not settle a forwarded message: ${String(error)}`);
        await sleep(pause);
      }
    }
  }

  private onMessage(message: CoordinationMessage): void {
    if (message.topic === "chat.receipt") {
      const id = (message.payload as { id?: unknown } | null)?.id;
      if (typeof id === "string") this.receipts.get(id)?.();
    } else if (message.topic === "chat.input" && isChatInput(message.payload)) {
      const payload = message.payload;
      // One chat's forwarded messages are taken in the order they arrived.
      const before = this.inbound.get(payload.key) ?? Promise.resolve();
      const next = before
        .then(() => this.takeForwarded(message.from, payload))
        .catch((error: unknown) =>
          this.log(`coordination: a forwarded message was not handled: ${String(error)}`),
        )
        .finally(() => {
          if (this.inbound.get(payload.key) === next) this.inbound.delete(payload.key);
        });
      this.inbound.set(payload.key, next);
    } else if (message.topic === "chat.action" && isChatAction(message.payload)) {
      const { platform, source, data, messageId } = message.payload;
      const handlers = this.handlers?.(platform);
      if (handlers)
        handlers.onAction({ source: { ...source, platform }, data, ...(messageId ? { messageId } : {}) });
      else this.log(`coordination: a ${platform} button press arrived; ${platform} is not connected here`);
    }
  }

  /**
   * A forwarded message is handled here only once this instance took it in the shared ledger: a
   * copy whose sender already took it back (it read its receipt too late, or this instance read
   * the message late after a reconnection) is left to the sender, and a second copy of one taken
   * here is confirmed again without being handled.
   */
  private async takeForwarded(from: string, payload: ChatInputPayload): Promise<void> {
    if (!payload.id) return this.received(payload);
    const verdict = await this.handoffs.take(payload.id);
    if (verdict === "withdrawn") {
      this.log(
        `coordination: a ${payload.platform} message for ${payload.key} was taken back by its sender, which routes it again`,
      );
      return;
    }
    void this.coordinator.send(from, "chat.receipt", { id: payload.id }).catch(() => undefined);
    if (verdict === "taken") await this.received(payload);
  }

  private async received(payload: ChatInputPayload): Promise<void> {
    const { key, platform, hops } = payload;
    const inbound = await fromWire(payload.message, join(this.options.home, "cache", "media"));
    inbound.source.platform = platform;
    // Stopping: this instance finishes what it runs; the router then passes the message on to a
    // live instance that is not draining (`destination`).
    if (this.draining) while (this.held.has(key) && !this.closed) await sleep(RETRY_MS);
    const handlers = this.handlers?.(platform);
    if (!handlers) {
      this.log(`coordination: a forwarded ${platform} message arrived; ${platform} is not connected here`);
      return;
    }
    this.hops.set(inbound, hops);
    handlers.onMessage(inbound);
  }
}
