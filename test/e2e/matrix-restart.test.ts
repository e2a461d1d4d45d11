/**
 * A restarted Matrix gateway keeps its device: `hermes gateway run` (the built CLI) with a
 * password login and encryption on answers Alice in an encrypted DM, is stopped, and started
 * again; it logs in as the same device with the same identity keys (the crypto store saved under
 * `<home>/matrix/`, 0600) and decrypts what Alice sends after the restart, without Alice seeing a
 * new device. Needs the optional package `fake-indexeddb` (Node has no IndexedDB for the SDK's
 * Rust crypto); skipped with that reason when it cannot be loaded.
 */
import { existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeMatrix, type RecordedRequest, startFakeMatrix } from "../support/fake-matrix.js";
import { type GatewayProcess, startGatewayProcess } from "../support/gateway-process.js";
import { type MatrixUser, matrixUser, type SeenEvent } from "../support/matrix-user.js";

const PASSWORD = "correct horse battery";
const BOT = "@hermes:fake.test";
const ALICE = "@alice:fake.test";

const hasIndexedDb = (() => {
  try {
    createRequire(import.meta.url).resolve("fake-indexeddb/auto");
    return true;
  } catch {
    return false;
  }
})();

let llm: FakeLlm;
let fake: FakeMatrix;
let h: { home: string; cwd: string };
let env: Record<string, string>;
let gateway: GatewayProcess | undefined;
let alice: MatrixUser;

const start = () =>
  startGatewayProcess(
    h,
    { ...env, ...(process.env.NODE_PATH ? { NODE_PATH: process.env.NODE_PATH } : {}) },
    /^Gateway running.*matrix/,
  );

beforeAll(async () => {
  if (!hasIndexedDb) return;
  llm = await startFakeLlm();
  fake = await startFakeMatrix();
  fake.addUser("hermes", PASSWORD);
  fake.addUser("alice", PASSWORD);
  h = tempHome(fakeProviderConfig(llm.url, 'display:\n  tool_progress: "off"\n'));
  env = {
    MATRIX_HOMESERVER: fake.url,
    MATRIX_USER_ID: BOT,
    MATRIX_PASSWORD: PASSWORD,
    MATRIX_ALLOWED_USERS: ALICE,
    MATRIX_E2EE_MODE: "required",
  };
  gateway = await start();
  alice = await matrixUser(fake.url, "alice", PASSWORD, { crypto: true });
}, 90_000);

afterAll(async () => {
  alice?.stop();
  await gateway?.stop();
  await fake?.stop();
  await llm?.close();
});

const bodyOf = (e: SeenEvent): string | undefined => {
  const content = (e.content["m.new_content"] as Record<string, unknown> | undefined) ?? e.content;
  return typeof content["body"] === "string" ? content["body"] : undefined;
};
const fromBot = (roomId: string, text: string) => (e: SeenEvent) =>
  e.sender === BOT && e.roomId === roomId && e.type === "m.room.message" && bodyOf(e) === text;

/** The device ids the bot published keys for (`keys/upload` with `device_keys`). */
const botDevices = () =>
  new Set(
    fake.requests
      .filter((r: RecordedRequest) => r.userId === BOT && r.path.endsWith("/keys/upload"))
      .map((r) => (r.body as { device_keys?: { device_id?: string } }).device_keys?.device_id)
      .filter((d): d is string => typeof d === "string"),
  );
const botLogins = () =>
  fake.requests.filter((r) => r.path.endsWith("/login") && JSON.stringify(r.body).includes("hermes"));

describe.skipIf(!hasIndexedDb)("a restarted Matrix gateway (fake-indexeddb installed)", () => {
  it("keeps its device and decrypts what arrives after the restart", async () => {
    const room = (
      await alice.client.createRoom({
        invite: [BOT],
        is_direct: true,
        initial_state: [
          { type: "m.room.encryption", state_key: "", content: { algorithm: "m.megolm.v1.aes-sha2" } },
        ],
      })
    ).room_id;
    await alice.waitForMember(room, BOT);
    llm.enqueue(reply().text("Got the first."));
    await alice.client.sendTextMessage(room, "first secret: swordfish");
    expect((await alice.waitFor(fromBot(room, "Got the first."), 30_000)).encrypted).toBe(true);
    const [device] = [...botDevices()];
    expect(device).toBeDefined();

    expect(await gateway?.stop()).toBe(0);
    const saved = join(h.home, "matrix", "crypto-store.bin");
    expect(existsSync(saved)).toBe(true);
    expect(statSync(saved).mode & 0o777).toBe(0o600);
    expect(statSync(join(h.home, "matrix")).mode & 0o777).toBe(0o700);

    gateway = await start();
    // The second login asked for the same device, and no other device's keys were published.
    expect((botLogins().at(-1)?.body as { device_id?: string } | undefined)?.device_id).toBe(device);
    expect([...botDevices()]).toEqual([device]);

    llm.enqueue(reply().text("Got the second."));
    await alice.client.sendTextMessage(room, "second secret: marlin");
    expect((await alice.waitFor(fromBot(room, "Got the second."), 30_000)).encrypted).toBe(true);
    expect(JSON.stringify(llm.chatRequests.at(-1)?.body)).toContain("marlin");
    const seen = await alice.client.getCrypto()?.getUserDeviceInfo([BOT], true);
    expect([...(seen?.get(BOT)?.keys() ?? [])]).toEqual([device]);
    expect(JSON.stringify(fake.roomEvents(room))).not.toContain("marlin");
  }, 120_000);
});
