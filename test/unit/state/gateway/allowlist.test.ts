/** Who may talk to the gateway: Hermes's allowlist order, deny by default, pairing only in DMs. */
import { describe, expect, it } from "vitest";
import {
  type AuthDecision,
  type AuthSubject,
  authorize,
  type Env,
  platformEnvPrefix,
  unauthorizedDmBehavior,
} from "../../../../src/state/gateway/allowlist.js";

const dm = (userId: string, userName?: string): AuthSubject => ({
  platform: "telegram",
  userId,
  userName,
  isDm: true,
});
const group = (userId: string, userName?: string): AuthSubject => ({
  platform: "telegram",
  userId,
  userName,
  isDm: false,
});

const cases: Array<[string, AuthSubject, Env, string[], AuthDecision]> = [
  ["nothing configured: DM may pair", dm("1"), {}, [], { allowed: false, pairing: true }],
  ["nothing configured: group is ignored", group("1"), {}, [], { allowed: false, pairing: false }],
  [
    "platform allowlist by id",
    dm("1"),
    { TELEGRAM_ALLOWED_USERS: "5, 1 ,7" },
    [],
    { allowed: true, via: "allowlist" },
  ],
  [
    "platform allowlist miss",
    dm("2"),
    { TELEGRAM_ALLOWED_USERS: "1" },
    [],
    { allowed: false, pairing: true },
  ],
  [
    "@username, any case",
    group("9", "Alice"),
    { TELEGRAM_ALLOWED_USERS: "@alice" },
    [],
    { allowed: true, via: "allowlist" },
  ],
  [
    "@username needs a handle",
    group("alice"),
    { TELEGRAM_ALLOWED_USERS: "@alice" },
    [],
    { allowed: false, pairing: false },
  ],
  [
    "an id never matches a handle",
    group("9", "1"),
    { TELEGRAM_ALLOWED_USERS: "1" },
    [],
    { allowed: false, pairing: false },
  ],
  ["* admits everyone", group("9"), { TELEGRAM_ALLOWED_USERS: "*" }, [], { allowed: true, via: "allowlist" }],
  [
    "another platform's list does not count",
    dm("1"),
    { DISCORD_ALLOWED_USERS: "1" },
    [],
    { allowed: false, pairing: true },
  ],
  ["global allowlist", group("3"), { GATEWAY_ALLOWED_USERS: "3" }, [], { allowed: true, via: "allowlist" }],
  [
    "platform allow-all",
    group("3"),
    { TELEGRAM_ALLOW_ALL_USERS: "true" },
    [],
    { allowed: true, via: "allow_all" },
  ],
  ["global allow-all", group("3"), { GATEWAY_ALLOW_ALL_USERS: "1" }, [], { allowed: true, via: "allow_all" }],
  [
    "allow-all false is off",
    dm("3"),
    { GATEWAY_ALLOW_ALL_USERS: "false" },
    [],
    { allowed: false, pairing: true },
  ],
  ["paired user", group("8"), {}, ["8"], { allowed: true, via: "pairing" }],
  [
    "pairing is checked before the platform allowlist",
    dm("8"),
    { TELEGRAM_ALLOWED_USERS: "8" },
    ["8"],
    { allowed: true, via: "pairing" },
  ],
  [
    "platform allow-all comes first",
    dm("8"),
    { TELEGRAM_ALLOW_ALL_USERS: "yes", TELEGRAM_ALLOWED_USERS: "8" },
    ["8"],
    { allowed: true, via: "allow_all" },
  ],
  [
    "allowlist before global allow-all",
    dm("8"),
    { GATEWAY_ALLOW_ALL_USERS: "true", GATEWAY_ALLOWED_USERS: "8" },
    [],
    { allowed: true, via: "allowlist" },
  ],
  [
    "blank user id is never admitted by lists",
    dm(""),
    { TELEGRAM_ALLOWED_USERS: "1," },
    [""],
    { allowed: false, pairing: true },
  ],
];

describe("authorize", () => {
  it.each(cases)("%s", (_name, subject, env, approved, expected) => {
    expect(authorize(subject, { env, approved: new Set(approved) })).toEqual(expected);
  });

  it("unauthorized_dm_behavior: ignore offers no pairing", () => {
    expect(authorize(dm("1"), { env: {}, approved: new Set(), unauthorizedDm: "ignore" })).toEqual({
      allowed: false,
      pairing: false,
    });
  });

  it("env prefixes follow Hermes's names", () => {
    expect(platformEnvPrefix("telegram")).toBe("TELEGRAM");
    expect(platformEnvPrefix("whatsapp_cloud")).toBe("WHATSAPP_CLOUD");
    expect(platformEnvPrefix("qqbot")).toBe("QQ");
    expect(
      authorize(
        { platform: "qqbot", userId: "1", isDm: true },
        { env: { QQ_ALLOWED_USERS: "1" }, approved: new Set() },
      ),
    ).toEqual({ allowed: true, via: "allowlist" });
  });
});

describe("Home Assistant's own events", () => {
  const ha = (userId: string, platform = "homeassistant"): AuthSubject => ({ platform, userId, isDm: false });
  const none = { env: {}, approved: new Set<string>() };

  it("pass without an allowlist (upstream's bypass), only as the system user on that platform", () => {
    expect(authorize(ha("homeassistant"), none)).toEqual({ allowed: true, via: "allow_all" });
    // An HA user's conversation input, and the same id on another platform, go through the lists.
    expect(authorize(ha("ha-guest"), none).allowed).toBe(false);
    expect(authorize(ha("homeassistant", "telegram"), none).allowed).toBe(false);
    expect(authorize(ha("HomeAssistant"), none).allowed).toBe(false);
    expect(
      authorize(ha("ha-owner"), { ...none, env: { HOMEASSISTANT_ALLOWED_USERS: "ha-owner" } }).allowed,
    ).toBe(true);
  });

  it("a stranger's conversation is ignored, not answered with a pairing code", () => {
    expect(
      authorize(
        { platform: "homeassistant", userId: "ha-guest", isDm: true },
        { ...none, unauthorizedDm: unauthorizedDmBehavior("homeassistant", {}, {}) },
      ),
    ).toEqual({
      allowed: false,
      pairing: false,
    });
  });
});
