/**
 * The end-to-end encryption half of the fake homeserver (`fake-matrix.ts`): device keys, one-time
 * and fallback keys, cross-signing keys, to-device messages and the device-list changes sync
 * reports. It stores and hands out what clients upload, as a homeserver does; it never looks inside.
 */

interface DeviceKeys {
  keys?: Record<string, unknown>;
  oneTime: Map<string, unknown>;
  fallback: Map<string, unknown>;
}

interface ToDevice {
  pos: number;
  type: string;
  sender: string;
  content: unknown;
}

type Json = Record<string, unknown>;

export class FakeMatrixKeys {
  readonly #devices = new Map<string, Map<string, DeviceKeys>>();
  readonly #crossSigning = new Map<string, Json>();
  readonly #changes: Array<{ pos: number; userId: string }> = [];
  readonly #toDevice = new Map<string, ToDevice[]>();

  /** `tick` advances the server's stream position and wakes waiting syncs; returns the new position. */
  constructor(private readonly tick: () => number) {}

  #devicesOf(userId: string): Map<string, DeviceKeys> {
    let map = this.#devices.get(userId);
    if (!map) {
      map = new Map();
      this.#devices.set(userId, map);
    }
    return map;
  }

  #device(userId: string, deviceId: string): DeviceKeys {
    const map = this.#devicesOf(userId);
    let device = map.get(deviceId);
    if (!device) {
      device = { oneTime: new Map(), fallback: new Map() };
      map.set(deviceId, device);
    }
    return device;
  }

  /** A user's devices changed (new keys, a new room member to track) at the current position. */
  changed(userId: string, pos: number): void {
    this.#changes.push({ pos, userId });
  }

  /** `POST /keys/upload`. */
  upload(userId: string, deviceId: string, body: Json): Json {
    const device = this.#device(userId, deviceId);
    if (body["device_keys"]) {
      device.keys = body["device_keys"] as Json;
      this.changed(userId, this.tick());
    }
    for (const [id, key] of Object.entries((body["one_time_keys"] ?? {}) as Json))
      device.oneTime.set(id, key);
    const fallback = Object.entries((body["fallback_keys"] ?? {}) as Json);
    if (fallback.length > 0) device.fallback = new Map(fallback);
    return { one_time_key_counts: { signed_curve25519: device.oneTime.size } };
  }

  /** `POST /keys/query`. */
  query(requester: string, body: Json): Json {
    const deviceKeys: Record<string, Json> = {};
    const master: Json = {};
    const selfSigning: Json = {};
    const userSigning: Json = {};
    for (const [user, wanted] of Object.entries((body["device_keys"] ?? {}) as Record<string, string[]>)) {
      const out: Json = {};
      for (const [id, d] of this.#devicesOf(user)) {
        if (d.keys && (wanted.length === 0 || wanted.includes(id))) out[id] = d.keys;
      }
      deviceKeys[user] = out;
      const cs = this.#crossSigning.get(user);
      if (cs?.["master_key"]) master[user] = cs["master_key"];
      if (cs?.["self_signing_key"]) selfSigning[user] = cs["self_signing_key"];
      if (cs?.["user_signing_key"] && user === requester) userSigning[user] = cs["user_signing_key"];
    }
    return {
      device_keys: deviceKeys,
      failures: {},
      master_keys: master,
      self_signing_keys: selfSigning,
      user_signing_keys: userSigning,
    };
  }

  /** `POST /keys/claim`: a one-time key each, the fallback key once they run out. */
  claim(body: Json): Json {
    const claimed: Record<string, Record<string, Json>> = {};
    for (const [user, wanted] of Object.entries((body["one_time_keys"] ?? {}) as Record<string, Json>)) {
      for (const deviceId of Object.keys(wanted)) {
        const d = this.#devices.get(user)?.get(deviceId);
        const first = d?.oneTime.entries().next().value ?? d?.fallback.entries().next().value;
        if (!d || !first) continue;
        d.oneTime.delete(first[0]);
        claimed[user] ??= {};
        (claimed[user] as Record<string, Json>)[deviceId] = { [first[0]]: first[1] };
      }
    }
    return { one_time_keys: claimed, failures: {} };
  }

  /** `POST /keys/device_signing/upload`. */
  uploadCrossSigning(userId: string, body: Json): void {
    this.#crossSigning.set(userId, { ...(this.#crossSigning.get(userId) ?? {}), ...body });
    this.changed(userId, this.tick());
  }

  /** `PUT /sendToDevice/{type}/{txn}`: queued per device until a later sync acknowledges it. */
  sendToDevice(sender: string, type: string, body: Json): void {
    for (const [user, byDevice] of Object.entries((body["messages"] ?? {}) as Record<string, Json>)) {
      for (const [deviceId, content] of Object.entries(byDevice)) {
        const targets = deviceId === "*" ? [...this.#devicesOf(user).keys()] : [deviceId];
        for (const target of targets) {
          const key = `${user}|${target}`;
          const queue = this.#toDevice.get(key) ?? [];
          queue.push({ pos: this.tick(), type, sender, content });
          this.#toDevice.set(key, queue);
        }
      }
    }
  }

  /** What a device's sync carries: to-device messages after `since` (older ones are dropped now). */
  syncPart(
    userId: string,
    deviceId: string,
    since: number | undefined,
    peers: ReadonlySet<string>,
  ): { body: Json; empty: boolean } {
    const key = `${userId}|${deviceId}`;
    const all = this.#toDevice.get(key) ?? [];
    const queue = all.filter((m) => since === undefined || m.pos > since);
    if (since !== undefined) this.#toDevice.set(key, queue);
    const changed =
      since === undefined
        ? []
        : [
            ...new Set(
              this.#changes.filter((c) => c.pos > since && peers.has(c.userId)).map((c) => c.userId),
            ),
          ];
    const device = this.#device(userId, deviceId);
    return {
      empty: queue.length === 0 && changed.length === 0,
      body: {
        to_device: { events: queue.map((m) => ({ type: m.type, sender: m.sender, content: m.content })) },
        device_lists: { changed, left: [] },
        device_one_time_keys_count: { signed_curve25519: device.oneTime.size },
        device_unused_fallback_key_types: device.fallback.size > 0 ? ["signed_curve25519"] : [],
      },
    };
  }
}
