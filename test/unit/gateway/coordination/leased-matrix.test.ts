/**
 * Matrix on two instances: both log in as the bot (each its own device), only the lease holder
 * syncs (joins the invited room, a user's message reaches the holder alone); the standby is
 * connected send-only and still posts into the room. A drained holder hands the sync over at once;
 * a holder that dies (stops renewing) loses it after the lease TTL and the standby syncs instead.
 * Real matrix-js-sdk adapter against the loopback homeserver.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { connectionLease } from "../../../../src/gateway/coordination/leased-connection.js";
import { createMatrixAdapter } from "../../../../src/gateway/platforms/matrix.js";
import type { InboundMessage } from "../../../../src/gateway/platforms/types.js";
import { type FakeMatrix, startFakeMatrix } from "../../../support/fake-matrix.js";
import { leasedInstances } from "../../../support/leased-instances.js";
import { type MatrixUser, matrixUser } from "../../../support/matrix-user.js";

const PASSWORD = "correct horse battery";
const BOT = "@hermes:fake.test";
const ALICE = "@alice:fake.test";
const WAIT = { timeout: 20_000, interval: 25 };
let fake: FakeMatrix;
let alice: MatrixUser | undefined;
const env = () => ({
  MATRIX_HOMESERVER: fake.url,
  MATRIX_USER_ID: BOT,
  MATRIX_PASSWORD: PASSWORD,
  MATRIX_ALLOWED_USERS: ALICE,
  MATRIX_E2EE_MODE: "off",
});
const leased = leasedInstances("matrix", createMatrixAdapter, env);

beforeEach(async () => {
  fake = await startFakeMatrix();
  fake.addUser("hermes", PASSWORD);
  fake.addUser("alice", PASSWORD);
});
afterEach(async () => {
  await leased.stop();
  alice?.stop();
  await fake.stop();
});

/** Two instances, the holder synced, and Alice's DM with the bot joined. */
async function pair() {
  const { hub, holder, standby } = await leased.pair(WAIT);
  alice = await matrixUser(fake.url, "alice", PASSWORD);
  const { room_id: room } = await alice.client.createRoom({ invite: [BOT], is_direct: true });
  await alice.waitForMember(room, BOT, 20_000);
  return { hub, holder, standby, room, alice };
}

const texts = (inbox: InboundMessage[]) => inbox.map((m) => m.text);

describe("Matrix sync under a lease", () => {
  it("is run by the holder alone, the standby posts send-only, and a drain hands it over at once", async () => {
    const { hub, holder, standby, room, alice } = await pair();
    await alice.client.sendTextMessage(room, "who syncs?");
    await vi.waitFor(() => expect(texts(holder.inbox)).toContain("who syncs?"), WAIT);
    await new Promise((r) => setTimeout(r, 300));
    expect(standby.inbox).toHaveLength(0);
    // Send-only: the standby answers a chat whose turn it runs.
    await standby.adapter.send({ chatId: room }, "answered by the standby");
    await fake.waitForRoomEvent(
      room,
      (e) =>
        e.sender === BOT && e.type === "m.room.message" && e.content["body"] === "answered by the standby",
    );

    const started = Date.now();
    await holder.connection.handOver();
    await vi.waitFor(() => expect(hub.leaseHolder(connectionLease("matrix", env())!)).toBe(standby.id), WAIT);
    // Released, not lapsed: inside the 1 s TTL a dead holder's lease would need.
    expect(Date.now() - started).toBeLessThan(1_000);
    await vi.waitFor(() => expect(standby.connection.active).toBe(true), WAIT);
    await alice.client.sendTextMessage(room, "and now?");
    await vi.waitFor(() => expect(texts(standby.inbox)).toContain("and now?"), WAIT);
    await new Promise((r) => setTimeout(r, 300));
    expect(texts(holder.inbox)).toEqual(["who syncs?"]);
    // Taken over, not replayed: the message the holder had is not handed to the agent again.
    expect(texts(standby.inbox)).toEqual(["and now?"]);
  }, 60_000);

  it("passes to the standby when the holder dies, within the lease TTL", async () => {
    const { hub, holder, standby, room, alice } = await pair();
    const killedAt = Date.now();
    hub.kill(holder.id);
    await vi.waitFor(() => expect(standby.connection.active).toBe(true), WAIT);
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    await vi.waitFor(() => expect(holder.connection.active).toBe(false), WAIT);
    await alice.client.sendTextMessage(room, "still there?");
    await vi.waitFor(() => expect(texts(standby.inbox)).toContain("still there?"), WAIT);
    await new Promise((r) => setTimeout(r, 300));
    expect(holder.inbox).toHaveLength(0);
  }, 60_000);
});
