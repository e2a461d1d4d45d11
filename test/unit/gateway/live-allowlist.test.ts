import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setEnvVar } from "../../../src/config/env-file.js";
import { envFileProblem, envFileProblemAt } from "../../../src/config/env-file-check.js";
import { isAuthEnvName, LiveAuthEnv } from "../../../src/gateway/auth/live-allowlist.js";
import { authorize, type Env } from "../../../src/state/gateway/allowlist.js";

let home: string;
let warnings: string[];
const envFile = () => join(home, ".env");
/** A clock far past every write: nothing counts as a racy write, so an unchanged stamp is a cache hit. */
const later = () => Date.now() + 60_000;

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "hermes-live-allowlist-"));
  warnings = [];
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const live = (env: Env, processEnv?: Env, now?: () => number) =>
  new LiveAuthEnv({ home, env, processEnv, warn: (line) => warnings.push(line), ...(now ? { now } : {}) });

const allowed = (env: Env, userId: string, approved: string[] = []) =>
  authorize({ platform: "telegram", userId, isDm: true }, { env, approved: new Set(approved) }).allowed;

describe("envFileProblem", () => {
  it("accepts comments, blanks, export, spaces, colons and quoted values over several lines", () => {
    const text = [
      "# secrets",
      "",
      "export TELEGRAM_ALLOWED_USERS=1,2",
      "GATEWAY_ALLOWED_USERS = @alice",
      "A: 1",
      "KEY='multi",
      "line'",
      'ESC="say \\"hi\\""',
      "",
    ].join("\n");
    expect(envFileProblem(text)).toBeUndefined();
  });

  it("names a line that is no assignment, a quote that never closes, and NUL bytes", () => {
    expect(envFileProblem("A=1\nthis is not an assignment\nB=2")).toBe("line 2 is not NAME=value");
    expect(envFileProblem('A=1\nTELEGRAM_ALLOWED_USERS="111\nB=2')).toBe(
      'line 2 opens a " quote that never closes',
    );
    expect(envFileProblem("A=1\u0000")).toContain("NUL");
  });
});

describe("isAuthEnvName", () => {
  it("takes only the names authorization reads", () => {
    for (const name of [
      "TELEGRAM_ALLOWED_USERS",
      "GATEWAY_ALLOWED_USERS",
      "DISCORD_ALLOW_ALL_USERS",
      "GATEWAY_ALLOW_ALL_USERS",
      "WHATSAPP_CLOUD_UNAUTHORIZED_DM_BEHAVIOR",
    ])
      expect(isAuthEnvName(name), name).toBe(true);
    for (const name of ["TELEGRAM_BOT_TOKEN", "ALLOWED_USERS", "OPENAI_API_KEY", "telegram_allowed_users"])
      expect(isAuthEnvName(name), name).toBe(false);
  });
});

describe("LiveAuthEnv", () => {
  it("applies a removal and an addition to .env on the next decision", () => {
    setEnvVar(home, "TELEGRAM_ALLOWED_USERS", "111");
    const auth = live({ TELEGRAM_ALLOWED_USERS: "111" }, {});
    expect(allowed(auth.current(), "111")).toBe(true);
    expect(allowed(auth.current(), "222")).toBe(false);
    setEnvVar(home, "TELEGRAM_ALLOWED_USERS", "222");
    expect(allowed(auth.current(), "111")).toBe(false);
    expect(allowed(auth.current(), "222")).toBe(true);
    expect(warnings).toEqual([]);
  });

  it("re-reads only when the file's stamp changes", () => {
    setEnvVar(home, "TELEGRAM_ALLOWED_USERS", "111");
    const auth = live({}, {}, later);
    const first = auth.current();
    expect(auth.current()).toBe(first);
    expect(auth.current()).toBe(first);
    setEnvVar(home, "TELEGRAM_ALLOWED_USERS", "111,333");
    const second = auth.current();
    expect(second).not.toBe(first);
    expect(second["TELEGRAM_ALLOWED_USERS"]).toBe("111,333");
    expect(auth.current()).toBe(second);
  });

  it("sees a same-size rewrite in place right after a read (racy write)", () => {
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=111\n");
    const auth = live({}, {});
    expect(allowed(auth.current(), "111")).toBe(true);
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=999\n");
    expect(allowed(auth.current(), "111")).toBe(false);
    expect(allowed(auth.current(), "999")).toBe(true);
  });

  it("keeps the last good allowlist when the file is garbled, warns once, and recovers when fixed", () => {
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=111\n");
    const auth = live({}, {});
    expect(allowed(auth.current(), "111")).toBe(true);
    // A garbled quote that dotenv would read as a one-line value, and an allow-all flag after it.
    writeFileSync(envFile(), 'TELEGRAM_ALLOWED_USERS="111\nTELEGRAM_ALLOW_ALL_USERS=true\n');
    expect(allowed(auth.current(), "111")).toBe(true);
    expect(allowed(auth.current(), "666")).toBe(false);
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=111\nrm -rf everything\nGATEWAY_ALLOW_ALL_USERS=1\n");
    expect(allowed(auth.current(), "666")).toBe(false);
    writeFileSync(envFile(), Buffer.from([0x54, 0x3d, 0xff, 0xfe, 0x0a]));
    expect(allowed(auth.current(), "666")).toBe(false);
    expect(allowed(auth.current(), "111")).toBe(true);
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toContain('opens a " quote that never closes');
    expect(warnings[1]).toContain("line 2 is not NAME=value");
    expect(warnings[2]).toContain("not UTF-8");
    expect(warnings[0]).toContain("was not applied: ");
    expect(warnings[0]).toContain("the allowlists in force before still apply");
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=222\n");
    expect(allowed(auth.current(), "111")).toBe(false);
    expect(allowed(auth.current(), "222")).toBe(true);
    expect(warnings).toHaveLength(3);
  });

  it("keeps the last good allowlist when the file cannot be read", () => {
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=111\n");
    const auth = live({}, {});
    expect(allowed(auth.current(), "111")).toBe(true);
    rmSync(envFile());
    mkdirSync(envFile());
    expect(allowed(auth.current(), "111")).toBe(true);
    expect(warnings.join("\n")).toContain("cannot be read (EISDIR)");
  });

  it("a deleted file takes its names away: nobody listed is allowed", () => {
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=111\n");
    const auth = live({ TELEGRAM_ALLOWED_USERS: "111" }, {});
    expect(allowed(auth.current(), "111")).toBe(true);
    rmSync(envFile());
    expect(allowed(auth.current(), "111")).toBe(false);
    expect(warnings).toEqual([]);
  });

  it("a name set in the real environment wins over the file, whatever the file says later", () => {
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=111\nGATEWAY_ALLOWED_USERS=555\n");
    const real = { TELEGRAM_ALLOWED_USERS: "111" };
    const auth = live({ TELEGRAM_ALLOWED_USERS: "111", GATEWAY_ALLOWED_USERS: "555" }, real);
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=999\nTELEGRAM_ALLOW_ALL_USERS=true\n");
    const env = auth.current();
    expect(env["TELEGRAM_ALLOWED_USERS"]).toBe("111");
    // Not in the real environment: the file's new answer counts (here, allow all).
    expect(env["GATEWAY_ALLOWED_USERS"]).toBeUndefined();
    expect(env["TELEGRAM_ALLOW_ALL_USERS"]).toBe("true");
  });

  it("without the real environment, a start value the file did not give counts as the environment's", () => {
    writeFileSync(envFile(), "GATEWAY_ALLOWED_USERS=555\n");
    const auth = live({ TELEGRAM_ALLOWED_USERS: "111", GATEWAY_ALLOWED_USERS: "555" });
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=999\n");
    const env = auth.current();
    expect(env["TELEGRAM_ALLOWED_USERS"]).toBe("111");
    expect(env["GATEWAY_ALLOWED_USERS"]).toBeUndefined();
  });

  it("leaves pairing-approved users allowed whatever the allowlist becomes", () => {
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=111\n");
    const auth = live({}, {});
    writeFileSync(envFile(), "TELEGRAM_ALLOWED_USERS=222\n");
    expect(allowed(auth.current(), "777", ["777"])).toBe(true);
    expect(allowed(auth.current(), "111", ["777"])).toBe(false);
  });

  it("takes only authorization names from the file", () => {
    writeFileSync(envFile(), "TELEGRAM_BOT_TOKEN=new-token\nTELEGRAM_ALLOWED_USERS=111\n");
    const auth = live(
      { TELEGRAM_BOT_TOKEN: "old-token", OTHER: "kept" },
      { TELEGRAM_BOT_TOKEN: "old-token" },
    );
    const env = auth.current();
    expect(env["TELEGRAM_BOT_TOKEN"]).toBe("old-token");
    expect(env["OTHER"]).toBe("kept");
    expect(env["TELEGRAM_ALLOWED_USERS"]).toBe("111");
  });
});

describe("envFileProblemAt", () => {
  it("is undefined for a good or missing file and names a garbled or unreadable one", () => {
    expect(envFileProblemAt(home)).toBeUndefined();
    writeFileSync(envFile(), "A=1\n");
    expect(envFileProblemAt(home)).toBeUndefined();
    writeFileSync(envFile(), Buffer.from([0x41, 0x3d, 0xc3, 0x28]));
    expect(envFileProblemAt(home)).toBe("it is not UTF-8 text");
    rmSync(envFile());
    mkdirSync(envFile());
    expect(envFileProblemAt(home)).toBe("it cannot be read (EISDIR)");
  });
});
