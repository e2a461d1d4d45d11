/**
 * A person on Matrix for end-to-end tests: a real `matrix-js-sdk` client (optionally with the Rust
 * crypto, so encrypted rooms are exercised for real) logged in to the fake homeserver. It records
 * every live event it sees, decrypted, and waits for the ones a test expects.
 */

import loglevel from "loglevel";
import {
  ClientEvent,
  createClient,
  type MatrixClient,
  type MatrixEvent,
  RoomEvent,
  RoomMemberEvent,
} from "matrix-js-sdk";

export interface SeenEvent {
  roomId: string;
  eventId: string;
  sender: string;
  type: string;
  content: Record<string, unknown>;
  /** Arrived encrypted (and was decrypted). */
  encrypted: boolean;
}

export interface MatrixUser {
  readonly client: MatrixClient;
  readonly userId: string;
  readonly events: SeenEvent[];
  /** Resolves with the first event seen (so far or later) that matches. */
  waitFor(predicate: (e: SeenEvent) => boolean, timeoutMs?: number): Promise<SeenEvent>;
  /** Resolves once this client sees `userId` joined to the room. */
  waitForMember(roomId: string, userId: string, timeoutMs?: number): Promise<void>;
  /** The latest text of a message (its last `m.replace` edit applied). */
  latestBody(eventId: string): string | undefined;
  stop(): void;
}

const quiet = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  getChild: () => quiet,
};

export async function matrixUser(
  homeserver: string,
  localpart: string,
  password: string,
  options: { crypto?: boolean } = {},
): Promise<MatrixUser> {
  // The SDK's own loggers (not the client's) print to the console; the test reads events instead.
  const silent = () => () => undefined;
  for (const logger of [loglevel, ...Object.values(loglevel.getLoggers())]) {
    logger.methodFactory = silent;
    logger.rebuild();
  }
  const anon = createClient({ baseUrl: homeserver, logger: quiet });
  const login = await anon.loginRequest({
    type: "m.login.password",
    identifier: { type: "m.id.user", user: localpart },
    password,
  });
  const client = createClient({
    baseUrl: homeserver,
    accessToken: login.access_token,
    userId: login.user_id,
    deviceId: login.device_id,
    logger: quiet,
  });
  if (options.crypto) {
    const debug = console.debug;
    const info = console.info;
    console.debug = () => undefined;
    console.info = () => undefined;
    try {
      await client.initRustCrypto({ useIndexedDB: false });
      const wasm = await import("@matrix-org/matrix-sdk-crypto-wasm");
      new wasm.Tracing(wasm.LoggerLevel.Warn).turnOn();
    } finally {
      console.debug = debug;
      console.info = info;
    }
  }
  const events: SeenEvent[] = [];
  let wake: Array<() => void> = [];
  const notify = () => {
    const current = wake;
    wake = [];
    for (const w of current) w();
  };
  const record = (event: MatrixEvent, encrypted: boolean) => {
    events.push({
      roomId: event.getRoomId() ?? "",
      eventId: event.getId() ?? "",
      sender: event.getSender() ?? "",
      type: event.getType(),
      content: event.getContent() as Record<string, unknown>,
      encrypted,
    });
    notify();
  };
  client.on(RoomEvent.Timeline, (event, _room, toStart) => {
    if (toStart) return;
    if (event.isEncrypted()) {
      void client.decryptEventIfNeeded(event).then(() => record(event, true));
    } else record(event, false);
  });
  client.on(RoomMemberEvent.Membership, () => notify());
  const prepared = new Promise<void>((resolve) => {
    const onSync = (state: string) => {
      if (state === "PREPARED") {
        client.removeListener(ClientEvent.Sync, onSync);
        resolve();
      }
    };
    client.on(ClientEvent.Sync, onSync);
  });
  await client.startClient({ initialSyncLimit: 1 });
  await prepared;

  const waitUntil = async (check: () => boolean, what: string, timeoutMs: number): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`${login.user_id}: timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };

  return {
    client,
    userId: login.user_id,
    events,
    async waitFor(predicate, timeoutMs = 20_000) {
      let found: SeenEvent | undefined;
      await waitUntil(
        () => {
          found = events.find(predicate);
          return found !== undefined;
        },
        "an event",
        timeoutMs,
      );
      return found as SeenEvent;
    },
    async waitForMember(roomId, userId, timeoutMs = 20_000) {
      await waitUntil(
        () => client.getRoom(roomId)?.getMember(userId)?.membership === "join",
        `${userId} to join ${roomId}`,
        timeoutMs,
      );
    },
    latestBody(eventId) {
      const original = events.find((e) => e.eventId === eventId);
      const edits = events.filter((e) => {
        const rel = e.content["m.relates_to"] as { rel_type?: string; event_id?: string } | undefined;
        return rel?.rel_type === "m.replace" && rel.event_id === eventId;
      });
      const last = edits.at(-1);
      const content = last ? (last.content["m.new_content"] as Record<string, unknown>) : original?.content;
      return typeof content?.["body"] === "string" ? content["body"] : undefined;
    },
    stop: () => client.stopClient(),
  };
}
