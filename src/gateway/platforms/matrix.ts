/**
 * Matrix adapter over `matrix-js-sdk` 37 (an optional dependency, loaded on first connect): login
 * by access token or password, the SDK's sync loop, invites joined only when the inviter may talk
 * to the agent, mention gating in rooms, threads, media both ways, typing, edits for streaming,
 * 👀/✅/❌ reactions, and encrypted rooms through the SDK's Rust crypto (WebAssembly).
 *
 * The sync loop, its retries and its position (`since`) are the SDK's: a dropped connection is
 * retried by the SDK and resumes from the last position, so nothing is lost; event ids already
 * handed over are remembered, so nothing is answered twice. Messages sent before the gateway
 * started (or before the bot joined a room) are history, not questions, and are skipped.
 *
 * Encryption (`MATRIX_E2EE_MODE` / `MATRIX_ENCRYPTION`): Node has no IndexedDB; with the optional
 * package `fake-indexeddb` the crypto store is saved under `<home>/matrix/` (`matrix-store.ts`), so
 * a restarted gateway logs in as the same device with the same keys and sessions. Without it the
 * store lives in memory for the life of the process: with a password the bot logs in as a fresh
 * device each start; with an access token the token's device is reused and other clients must
 * re-verify it. A room that is encrypted is never sent plaintext: without crypto such sends fail
 * with a message that says how to turn it on.
 */
import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import type { MatrixClient, MatrixEvent, Room, RoomMember } from "matrix-js-sdk";
import { authorize } from "../../state/gateway/allowlist.js";
import { PairingStore } from "../../state/gateway/pairing.js";
import { chatQueue, courtesy, handOver, uploadSize, withAttachments } from "./adapter-kit.js";
import { type MatrixSettings, matrixLoginProblem, matrixSettings } from "./matrix-config.js";
import { editContent, matrixRoute, matrixTextContent, relationFor } from "./matrix-format.js";
import { type MatrixMediaRef, matrixInbound } from "./matrix-inbound.js";
import { decryptAttachment, downloadMxc, encryptAttachment, uploadMedia } from "./matrix-media.js";
import { loadMatrixSdk, quietLogger, type Sdk, startRustCrypto } from "./matrix-sdk.js";
import { installIndexedDb, MatrixCryptoStore } from "./matrix-store.js";
import { errorText, extensionFor, mimeFor, saveInboundFile } from "./media-files.js";
import {
  type AdapterContext,
  type AdapterHandlers,
  type InboundMedia,
  type InboundMessage,
  type MediaKind,
  type OutboundTarget,
  type PlatformAdapter,
  PlatformError,
} from "./types.js";

const MAX_MESSAGE_LENGTH = 4000;
const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;
const SEEN_LIMIT = 5000;
/** Events this much older than the start (or the join) are history. */
const GRACE_MS = 5000;
const FIRST_SYNC_TIMEOUT_MS = 60_000;

const MSGTYPE: Readonly<Record<MediaKind, string>> = {
  photo: "m.image",
  video: "m.video",
  voice: "m.audio",
  audio: "m.audio",
  document: "m.file",
};

/** Settings for tests and embedders; the environment and the `matrix:` section give the rest. */
export interface MatrixAdapterOptions {
  /** Loads the SDK (default: a dynamic import of `matrix-js-sdk`). */
  loadSdk?: () => Promise<Sdk>;
}

/** Creates the Matrix adapter; nothing is contacted until `connect`. */
export function createMatrixAdapter(
  ctx: AdapterContext,
  options: MatrixAdapterOptions = {},
): PlatformAdapter {
  const settings: MatrixSettings = matrixSettings(ctx.env, ctx.settings);
  let handlers: AdapterHandlers | undefined;
  let client: MatrixClient | undefined;
  let accessToken = "";
  let userId = "";
  let crypto = false;
  /** The saved crypto store, when encryption is on and `fake-indexeddb` is installed (receiving only). */
  let store: MatrixCryptoStore | undefined;
  let receiving = false;
  let prepared = false;
  let startedAt = 0;
  const seen = new Set<string>();
  const joinedAt = new Map<string, number>();
  const directRooms = new Set<string>();
  const botThreads = new Set<string>();
  const typingIn = new Set<string>();
  const reactionIds = new Map<string, string>();
  const reportedInvites = new Set<string>();

  const report = (message: string): void => {
    try {
      handlers?.onError(message);
    } catch {
      // A failing error handler must not stop the sync loop.
    }
  };
  /** Per room: a message waiting for its file must not be overtaken by the next one. */
  const queue = chatQueue((err) => report(`Matrix message handling failed: ${errorText(err)}`));

  /** Users approved through pairing may invite the bot too; a broken pairing file approves no one. */
  const approvedUsers = (): ReadonlySet<string> => {
    try {
      return new PairingStore({ home: ctx.home }).approvedIds("matrix");
    } catch {
      return new Set();
    }
  };

  const remember = (id: string): void => {
    seen.add(id);
    if (seen.size > SEEN_LIMIT) seen.delete(seen.values().next().value as string);
  };

  function requireClient(): MatrixClient {
    if (!client) throw new PlatformError("the Matrix adapter is not connected");
    return client;
  }

  async function roomEncrypted(roomId: string): Promise<boolean> {
    const c = requireClient();
    const room = c.getRoom(roomId);
    if (room) return room.hasEncryptionStateEvent();
    try {
      await c.getStateEvent(roomId, "m.room.encryption", "");
      return true;
    } catch (err) {
      if ((err as { errcode?: string }).errcode === "M_NOT_FOUND") return false;
      throw new PlatformError(`could not read Matrix room ${roomId}: ${errorText(err)}`);
    }
  }

  /** Sends one event, refusing plaintext into an encrypted room. */
  async function sendRoomEvent(
    roomId: string,
    type: string,
    content: Record<string, unknown>,
  ): Promise<string> {
    const c = requireClient();
    const encrypted = await roomEncrypted(roomId);
    if (encrypted && !crypto) {
      throw new PlatformError(
        `Matrix room ${roomId} is end-to-end encrypted and encryption is off: set MATRIX_E2EE_MODE=optional (or required) in the .env file of your Hermes home`,
      );
    }
    if (encrypted && !c.getRoom(roomId)) {
      throw new PlatformError(`Matrix room ${roomId} is encrypted and the bot has not joined it`);
    }
    try {
      // The SDK types content per event type; ours is built and checked by matrix-format.ts.
      const send = c.sendEvent.bind(c) as unknown as (
        room: string,
        eventType: string,
        body: Record<string, unknown>,
      ) => Promise<{ event_id: string }>;
      const res = await send(roomId, type, content);
      return res.event_id;
    } catch (err) {
      const status = (err as { httpStatus?: number }).httpStatus;
      const retry = (err as { data?: { retry_after_ms?: unknown } }).data?.retry_after_ms;
      throw new PlatformError(
        `Matrix refused a message to ${roomId}: ${errorText(err)}`,
        status === 429 ? (typeof retry === "number" ? retry : 5000) : undefined,
      );
    }
  }

  async function stopTyping(roomId: string): Promise<void> {
    if (!typingIn.delete(roomId)) return;
    await client?.sendTyping(roomId, false, 0).catch(() => undefined);
  }

  async function download(ref: MatrixMediaRef): Promise<InboundMedia> {
    const limit = Math.min(ctx.maxInboundMediaBytes, MAX_UPLOAD_BYTES);
    if (ref.size !== undefined && ref.size > limit) {
      throw new Error(
        `it is ${ref.size} bytes, over the ${limit}-byte limit (gateway.max_inbound_media_bytes)`,
      );
    }
    const url = ref.file?.url ?? ref.url ?? "";
    const got = await downloadMxc(settings.homeserver, accessToken, url, limit);
    const bytes = ref.file ? decryptAttachment(got.bytes, ref.file) : got.bytes;
    const mimeType = ref.mimeType ?? (ref.file ? undefined : got.contentType);
    const ext =
      extname(ref.fileName ?? "")
        .replace(/[^A-Za-z0-9.]/g, "")
        .slice(0, 10) || extensionFor(mimeType);
    const path = await saveInboundFile(ctx.mediaDir, `matrix-${ref.kind}`, bytes, ext);
    return { kind: ref.kind, path, mimeType, fileName: ref.fileName };
  }

  async function onTimeline(event: MatrixEvent, room: Room | undefined): Promise<void> {
    const c = client;
    const eventId = event.getId();
    if (!c || !room || !eventId || seen.has(eventId) || event.getSender() === userId) return;
    const ts = event.getTs();
    if (ts < startedAt - GRACE_MS || ts < (joinedAt.get(room.roomId) ?? 0) - GRACE_MS) return;
    remember(eventId);
    if (event.isEncrypted()) {
      await c.decryptEventIfNeeded(event);
      if (event.isDecryptionFailure()) {
        report(
          `could not decrypt a Matrix message from ${event.getSender()} in ${room.roomId} (${event.decryptionFailureReason ?? "no key"}); ask them to resend it once the bot's device is verified`,
        );
        return;
      }
    }
    const result = matrixInbound(
      {
        eventId,
        roomId: room.roomId,
        sender: event.getSender() ?? "",
        type: event.getType(),
        content: event.getContent() as Record<string, unknown>,
      },
      { name: room.name, direct: directRooms.has(room.roomId) || room.getJoinedMemberCount() <= 2 },
      { userId, displayName: c.getUser(userId)?.displayName, threads: botThreads },
      settings,
    );
    if (!result.deliver) {
      if (result.report) report(result.report);
      return;
    }
    const { message, media: refs } = result;
    queue.add(room.roomId, async () => {
      const media: InboundMedia[] = [];
      const notes: string[] = [];
      for (const ref of refs) {
        try {
          media.push(await download(ref));
        } catch (err) {
          report(`could not download a Matrix file from ${message.source.userId}: ${errorText(err)}`);
          notes.push(
            `[a file${ref.fileName ? ` (${ref.fileName})` : ""} could not be downloaded: ${errorText(err)}]`,
          );
        }
      }
      if (!handlers || !receiving) return;
      handOver(handlers, withAttachments(message, notes, media), report, "Matrix message");
    });
  }

  /** Joins a room the bot was invited to when the inviter may talk to the agent. */
  async function onInvite(member: RoomMember, event: MatrixEvent | undefined): Promise<void> {
    const c = client;
    if (!c || member.userId !== userId || member.membership !== "invite") return;
    const inviter = event?.getSender() ?? member.events.member?.getSender() ?? "";
    // The gateway's own decision when connected (allowlists kept current with .env).
    const allowed =
      handlers?.authorized?.({
        platform: "matrix",
        chatType: "group",
        chatId: member.roomId,
        userId: inviter,
        userName: inviter,
      }) ??
      authorize(
        { platform: "matrix", userId: inviter, userName: inviter, isDm: false },
        { env: ctx.env, approved: approvedUsers() },
      ).allowed;
    if (!allowed) {
      if (!reportedInvites.has(member.roomId)) {
        reportedInvites.add(member.roomId);
        report(
          `ignored a Matrix invite to ${member.roomId} from ${inviter || "an unknown user"}: not in MATRIX_ALLOWED_USERS`,
        );
      }
      return;
    }
    const content = (event ?? member.events.member)?.getContent() as { is_direct?: unknown } | undefined;
    if (content?.is_direct === true) directRooms.add(member.roomId);
    joinedAt.set(member.roomId, Date.now());
    try {
      await c.joinRoom(member.roomId);
    } catch (err) {
      report(`could not join Matrix room ${member.roomId} (invited by ${inviter}): ${errorText(err)}`);
    }
  }

  async function login(sdk: Sdk): Promise<{ token: string; user: string; device: string | undefined }> {
    const base = sdk.createClient({ baseUrl: settings.homeserver, logger: quietLogger });
    const fail = (what: string, err: unknown): PlatformError => {
      const status = (err as { httpStatus?: number }).httpStatus;
      if (status === undefined) {
        return new PlatformError(
          `could not reach the Matrix homeserver at ${settings.homeserver} (${errorText(err)}): check MATRIX_HOMESERVER`,
        );
      }
      return new PlatformError(`the Matrix homeserver refused ${what} (HTTP ${status}: ${errorText(err)})`);
    };
    if (settings.accessToken) {
      const c = sdk.createClient({
        baseUrl: settings.homeserver,
        accessToken: settings.accessToken,
        logger: quietLogger,
      });
      try {
        const who = await c.whoami();
        return { token: settings.accessToken, user: who.user_id, device: who.device_id ?? settings.deviceId };
      } catch (err) {
        throw fail("MATRIX_ACCESS_TOKEN", err);
      }
    }
    // Without a crypto store that survives restarts, an encrypting bot needs a fresh device; with
    // one, it asks for the device its saved keys belong to.
    const device = store
      ? (settings.deviceId ?? store.savedDevice(settings.userId ?? ""))
      : settings.e2ee === "off"
        ? settings.deviceId
        : undefined;
    try {
      const res = await base.loginRequest({
        type: "m.login.password",
        identifier: { type: "m.id.user", user: settings.userId ?? "" },
        password: settings.password ?? "",
        initial_device_display_name: "Hermes Agent",
        ...(device ? { device_id: device } : {}),
      });
      return { token: res.access_token, user: res.user_id, device: res.device_id };
    } catch (err) {
      throw fail(`the password login of ${settings.userId}`, err);
    }
  }

  async function startCrypto(c: MatrixClient): Promise<boolean> {
    if (settings.e2ee === "off") return false;
    try {
      const device = c.getDeviceId();
      if (store && device) await store.restore(userId, device);
      await startRustCrypto(c, store !== undefined && device !== null);
      return true;
    } catch (err) {
      const why = `Matrix end-to-end encryption could not start (${errorText(err)})`;
      if (settings.e2ee === "required") {
        throw new PlatformError(`${why}; set MATRIX_E2EE_MODE=off to run without it`);
      }
      report(`${why}; continuing without it (encrypted rooms are not answered)`);
      return false;
    }
  }

  function waitForFirstSync(c: MatrixClient, sdk: Sdk): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        c.removeListener(sdk.ClientEvent.Sync, onSync);
        reject(
          new PlatformError(
            `the Matrix homeserver at ${settings.homeserver} sent no sync within ${FIRST_SYNC_TIMEOUT_MS / 1000}s`,
          ),
        );
      }, FIRST_SYNC_TIMEOUT_MS);
      const onSync = (state: string, _prev: string | null, data?: { error?: Error }): void => {
        if (state === "PREPARED" || state === "SYNCING") {
          clearTimeout(timer);
          c.removeListener(sdk.ClientEvent.Sync, onSync);
          resolve();
        } else if (state === "ERROR" && !prepared) {
          clearTimeout(timer);
          c.removeListener(sdk.ClientEvent.Sync, onSync);
          reject(
            new PlatformError(`the first Matrix sync failed: ${errorText(data?.error ?? "unknown error")}`),
          );
        }
      };
      c.on(sdk.ClientEvent.Sync, onSync as never);
    });
  }

  function listen(c: MatrixClient, sdk: Sdk): void {
    c.on(sdk.RoomMemberEvent.Membership, (event, member) => {
      if (!prepared && member.userId !== userId) return;
      void onInvite(member, event).catch((err: unknown) =>
        report(`Matrix invite handling failed: ${errorText(err)}`),
      );
    });
    c.on(sdk.RoomEvent.Timeline, (event, room, toStart, _removed, data) => {
      if (toStart || !data?.liveEvent || !prepared) return;
      void onTimeline(event, room).catch((err: unknown) =>
        report(`Matrix event handling failed: ${errorText(err)}`),
      );
    });
    let lost = false;
    c.on(sdk.ClientEvent.Sync, (state, _prev, data) => {
      if (state === "PREPARED") prepared = true;
      if ((state === "ERROR" || state === "RECONNECTING") && prepared && !lost) {
        lost = true;
        report(`Matrix sync lost (${errorText(data?.error ?? state)}); the SDK is reconnecting`);
      } else if (state === "SYNCING" && lost) {
        lost = false;
        report("Matrix sync restored");
      }
    });
  }

  async function react(message: InboundMessage, key: string): Promise<string | undefined> {
    if (!message.messageId) return undefined;
    try {
      return await sendRoomEvent(message.source.chatId, "m.reaction", {
        "m.relates_to": { rel_type: "m.annotation", event_id: message.messageId, key },
      });
    } catch (err) {
      report(`could not react to a Matrix message: ${errorText(err)}`);
      return undefined;
    }
  }

  function placement(target: OutboundTarget): {
    roomId: string;
    relation: Record<string, unknown> | undefined;
  } {
    const route = matrixRoute(target.chatId, target.threadId);
    if (!route.roomId) throw new PlatformError("cannot send to Matrix without a room id");
    if (route.threadId) botThreads.add(route.threadId);
    return {
      roomId: route.roomId,
      relation: relationFor({ threadId: route.threadId, replyTo: target.replyTo }),
    };
  }

  const adapter: PlatformAdapter = {
    platform: "matrix",
    capabilities: {
      maxMessageLength: MAX_MESSAGE_LENGTH,
      edit: true,
      buttons: false,
      typing: true,
      media: true,
      maxMediaBytes: MAX_UPLOAD_BYTES,
    },

    async connect(h, connectOptions) {
      if (client) return;
      const problem = matrixLoginProblem(settings);
      if (problem) throw new PlatformError(problem);
      const sdk = await (options.loadSdk ?? loadMatrixSdk)();
      if (settings.e2ee !== "off" && connectOptions?.receive !== false) {
        const factory = installIndexedDb();
        store = factory ? new MatrixCryptoStore(ctx.home, factory, report) : undefined;
      }
      const session = await login(sdk);
      accessToken = session.token;
      userId = session.user;
      const c = sdk.createClient({
        baseUrl: settings.homeserver,
        accessToken,
        userId,
        ...(session.device ? { deviceId: session.device } : {}),
        logger: quietLogger,
      });
      client = c;
      handlers = h;
      if (connectOptions?.receive === false) {
        crypto = false;
        return;
      }
      try {
        crypto = await startCrypto(c);
        startedAt = Date.now();
        receiving = true;
        listen(c, sdk);
        const first = waitForFirstSync(c, sdk);
        await c.startClient({ initialSyncLimit: 1, lazyLoadMembers: false });
        await first;
        // Keys and sessions change with what syncs bring and what is sent: saved soon after.
        if (crypto && store) c.on(sdk.ClientEvent.Sync, () => store?.saveSoon());
      } catch (err) {
        c.stopClient();
        client = undefined;
        handlers = undefined;
        receiving = false;
        throw err instanceof PlatformError
          ? err
          : new PlatformError(`Matrix failed to start: ${errorText(err)}`);
      }
    },

    async disconnect() {
      const c = client;
      receiving = false;
      client = undefined;
      prepared = false;
      c?.stopClient();
      await queue.idle();
      if (crypto)
        await store
          ?.save()
          .catch((err: unknown) => report(`could not save the Matrix crypto store: ${errorText(err)}`));
      handlers = undefined;
    },

    async send(target, text, sendOptions = {}) {
      if (text.trim() === "") throw new PlatformError("cannot send an empty message to Matrix");
      const { roomId, relation } = placement(target);
      const content: Record<string, unknown> = { ...matrixTextContent(text, sendOptions.plain) };
      if (relation) content["m.relates_to"] = relation;
      await stopTyping(roomId);
      return { messageId: await sendRoomEvent(roomId, "m.room.message", content) };
    },

    async edit(target, messageId, text, sendOptions = {}) {
      if (text.trim() === "") throw new PlatformError("cannot edit a Matrix message to be empty");
      const { roomId } = placement(target);
      await sendRoomEvent(
        roomId,
        "m.room.message",
        editContent(messageId, matrixTextContent(text, sendOptions.plain)),
      );
    },

    async typing(target) {
      await courtesy(async () => {
        const { roomId } = placement(target);
        if (!client) return;
        await client.sendTyping(roomId, true, 30_000);
        typingIn.add(roomId);
      });
    },

    async sendMedia(target, media) {
      const size = await uploadSize(media.path, {
        to: "to Matrix",
        maxBytes: MAX_UPLOAD_BYTES,
        limit: "Matrix uploads are limited to 100 MB here",
      });
      const { roomId, relation } = placement(target);
      const name = basename(media.path);
      const mime = mimeFor(name);
      const bytes = await readFile(media.path);
      const encrypted = await roomEncrypted(roomId);
      const content: Record<string, unknown> = {
        msgtype: MSGTYPE[media.kind],
        body: media.caption?.trim() || name,
        filename: name,
        info: { mimetype: mime, size },
        ...(media.kind === "voice" ? { "org.matrix.msc3245.voice": {} } : {}),
      };
      try {
        if (encrypted) {
          const sealed = encryptAttachment(bytes);
          const url = await uploadMedia(
            settings.homeserver,
            accessToken,
            sealed.data,
            "application/octet-stream",
            name,
          );
          content["file"] = { ...sealed.file, url };
        } else {
          content["url"] = await uploadMedia(settings.homeserver, accessToken, bytes, mime, name);
        }
      } catch (err) {
        throw new PlatformError(errorText(err));
      }
      if (relation) content["m.relates_to"] = relation;
      await stopTyping(roomId);
      return { messageId: await sendRoomEvent(roomId, "m.room.message", content) };
    },

    async processing(message, state) {
      if (!settings.reactions || !message.messageId) return;
      if (state === "started") {
        const id = await react(message, "👀");
        if (id) reactionIds.set(message.messageId, id);
        return;
      }
      const eyes = reactionIds.get(message.messageId);
      reactionIds.delete(message.messageId);
      if (eyes && client) await client.redactEvent(message.source.chatId, eyes).catch(() => undefined);
      await react(message, state === "succeeded" ? "✅" : "❌");
    },
  };
  return adapter;
}
