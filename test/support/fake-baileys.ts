/**
 * A stand-in for the parts of `baileys` the personal-account adapter touches, at the socket/event
 * seam: `makeWASocket` returns an object with baileys' `ev` emitter (`connection.update`,
 * `creds.update`, `messages.upsert`), `sendMessage`, `sendPresenceUpdate`, `readMessages`, `user`
 * and `end`; `useMultiFileAuthState` keeps `creds.json` in the folder as baileys does;
 * `downloadMediaMessage` returns the bytes a test attached. WhatsApp's own wire protocol (Noise
 * handshake, Signal sessions) is not spoken: it cannot be faked faithfully, so these tests stop at
 * baileys' API.
 */
import { EventEmitter } from "node:events";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type {
  BaileysLike,
  WAMessageLike,
  WASocketLike,
} from "../../src/gateway/platforms/whatsapp-baileys.js";

export interface FakeSent {
  jid: string;
  content: Record<string, unknown>;
  id: string;
}

export interface FakeBaileys extends BaileysLike {
  /** Sockets made so far (one per connect or reconnect). */
  readonly sockets: FakeSocket[];
  readonly sent: FakeSent[];
  readonly presence: Array<{ type: string; jid?: string | undefined }>;
  /** The latest socket. */
  current(): FakeSocket;
  /** Waits until `n` sockets were made and the last one is open. */
  waitForSocket(n: number): Promise<FakeSocket>;
  waitForSent(predicate: (s: FakeSent) => boolean): Promise<FakeSent>;
}

export interface FakeSocket extends WASocketLike {
  ev: EventEmitter & WASocketLike["ev"];
  ended: boolean;
  /** The user sends a message (type `notify`, or `append` for ones delivered after a reconnect). */
  receive(message: WAMessageLike, type?: "notify" | "append"): void;
  /** Drops the connection with a status code (428 connection closed, 401 logged out). */
  drop(statusCode: number): void;
}

export function fakeBaileys(
  options: { me?: string; paired?: boolean; openOn?: "connect" | "never" } = {},
): FakeBaileys {
  const me = options.me ?? "15550001111:7@s.whatsapp.net";
  const sockets: FakeSocket[] = [];
  const sent: FakeSent[] = [];
  const presence: Array<{ type: string; jid?: string | undefined }> = [];
  const waiters = new Set<() => void>();
  let seq = 0;
  const wake = () => {
    for (const w of [...waiters]) w();
  };
  const until = <T>(get: () => T | undefined): Promise<T> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`fake baileys: timed out; sent ${JSON.stringify(sent.map((s) => s.content))}`)),
        10_000,
      );
      const check = () => {
        const v = get();
        if (v === undefined) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(v);
      };
      waiters.add(check);
      check();
    });

  const fake: FakeBaileys = {
    sockets,
    sent,
    presence,
    current: () => {
      const s = sockets.at(-1);
      if (!s) throw new Error("no socket yet");
      return s;
    },
    makeWASocket(config) {
      const ev = new EventEmitter() as FakeSocket["ev"];
      const creds = (config["auth"] as { creds?: { me?: { id: string } } }).creds;
      const socket: FakeSocket = {
        ev,
        ended: false,
        user: creds?.me ? { id: creds.me.id } : undefined,
        async sendMessage(jid, content) {
          const id = `3EB0${String(++seq).padStart(16, "0")}`;
          sent.push({ jid, content, id });
          wake();
          // Like WhatsApp, the account's own sends come back as `fromMe` upserts.
          queueMicrotask(() =>
            ev.emit("messages.upsert", {
              type: "notify",
              messages: [
                {
                  key: { remoteJid: jid, fromMe: true, id },
                  message: { conversation: String(content["text"] ?? "") },
                },
              ],
            }),
          );
          return { key: { remoteJid: jid, fromMe: true, id } };
        },
        async sendPresenceUpdate(type, jid) {
          presence.push({ type, jid });
        },
        async readMessages() {},
        end() {
          socket.ended = true;
        },
        receive(message, type = "notify") {
          ev.emit("messages.upsert", { messages: [message], type });
        },
        drop(statusCode) {
          ev.emit("connection.update", {
            connection: "close",
            lastDisconnect: {
              error: Object.assign(new Error("Connection Closed"), { output: { statusCode } }),
            },
          });
        },
      };
      sockets.push(socket);
      queueMicrotask(wake);
      if (options.openOn !== "never")
        setImmediate(() => {
          ev.emit("connection.update", { connection: "connecting" });
          ev.emit("connection.update", { connection: "open" });
          wake();
        });
      return socket;
    },
    async useMultiFileAuthState(folder) {
      const file = join(folder, "creds.json");
      if (!existsSync(file))
        writeFileSync(file, JSON.stringify(options.paired === false ? {} : { me: { id: me, name: "Me" } }), {
          mode: 0o644,
        });
      const creds = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
      return {
        state: { creds, keys: {} },
        saveCreds: async () => writeFileSync(file, JSON.stringify(creds), { mode: 0o644 }),
      };
    },
    async downloadMediaMessage(message) {
      const bytes = (message as { bytes?: Buffer }).bytes;
      if (!bytes) throw new Error("media expired");
      return bytes;
    },
    waitForSocket: (n) => until(() => (sockets.length >= n ? sockets[n - 1] : undefined)),
    waitForSent: (predicate) => until(() => sent.find(predicate)),
  };
  return fake;
}
