import { spawn, spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  AuthStoreError,
  addPoolRecord,
  authLockPath,
  borrowedRecord,
  CLEARED_STATUS,
  fingerprint,
  poolProviders,
  poolRecords,
  readAuthStore,
  removePoolRecord,
  resetPoolStatuses,
  suppressedSources,
  timestamp,
  updateAuthStore,
} from "../../../src/config/auth-store.js";
import { FileLockTimeoutError } from "../../../src/util/file-lock.js";
import { useTempHome } from "./helpers.js";

const python = spawnSync("python3", ["-c", "import fcntl, json"]).status === 0;
const tempHome = useTempHome();

/** An auth.json as Python Hermes writes it, with fields this implementation does not know. */
const PYTHON_FIXTURE = {
  version: 1,
  providers: {
    nous: {
      access_token: "nous-access",
      refresh_token: "nous-refresh",
      expires_at: "2031-01-01T00:00:00+00:00",
      portal_base_url: "https://portal.nousresearch.com",
    },
  },
  active_provider: "nous",
  credential_pool: {
    openrouter: [
      {
        id: "a1b2c3",
        label: "work",
        auth_type: "api_key",
        priority: 0,
        source: "manual",
        access_token: "sk-or-v1-aaaaaaaaaaaaaaaaaaaaaaaa1111",
        last_status: "exhausted",
        last_status_at: "2025-01-01T00:00:00+00:00",
        last_error_code: 429,
        last_error_reason: "rate_limit",
        last_error_message: null,
        last_error_reset_at: 1735693200000,
        base_url: "https://openrouter.ai/api/v1",
        request_count: 7,
        failure_reason: "rate_limit",
      },
      {
        id: "d4e5f6",
        label: "OPENROUTER_API_KEY",
        auth_type: "api_key",
        priority: 1,
        source: "env:OPENROUTER_API_KEY",
        last_status: null,
        last_status_at: null,
        last_error_code: null,
        last_error_reason: null,
        last_error_message: null,
        last_error_reset_at: null,
        request_count: 0,
        secret_fingerprint: "sha256:0123456789abcdef",
        secret_source: "env",
      },
    ],
  },
  suppressed_sources: { anthropic: ["env:ANTHROPIC_API_KEY"], copilot: { gh_cli: true } },
  updated_at: "2025-01-01T00:00:00+00:00",
  future_section: { keep: ["me"] },
};

function writeAuth(home: string, value: unknown, mode = 0o600): string {
  const path = join(home, "auth.json");
  writeFileSync(path, typeof value === "string" ? value : `${JSON.stringify(value, null, 2)}\n`);
  chmodSync(path, mode);
  return path;
}

describe("readAuthStore", () => {
  it("gives an empty store for a missing file, and a no-op update does not create one", async () => {
    const home = tempHome();
    const snapshot = readAuthStore(home);
    expect(snapshot.exists).toBe(false);
    expect(snapshot.data).toEqual({ version: 1, providers: {} });
    await updateAuthStore(home, () => {});
    expect(existsSync(join(home, "auth.json"))).toBe(false);
  });

  it("reads a Python-shaped file as is, normalising timestamps Python may store in other forms", () => {
    const home = tempHome();
    writeAuth(home, PYTHON_FIXTURE);
    const { data, exists } = readAuthStore(home);
    expect(exists).toBe(true);
    expect(data.active_provider).toBe("nous");
    expect(poolProviders(data)).toEqual(["openrouter"]);
    const [manual, env] = poolRecords(data, "openrouter");
    expect(manual).toMatchObject({
      id: "a1b2c3",
      label: "work",
      source: "manual",
      last_status: "exhausted",
      last_status_at: Date.parse("2025-01-01T00:00:00Z") / 1000,
      last_error_code: 429,
      last_error_reset_at: 1735693200,
      request_count: 7,
      failure_reason: "rate_limit",
    });
    expect(env).toMatchObject({
      source: "env:OPENROUTER_API_KEY",
      secret_fingerprint: "sha256:0123456789abcdef",
    });
    expect(env?.access_token).toBeUndefined();
    expect(suppressedSources(data, "anthropic")).toEqual(["env:ANTHROPIC_API_KEY"]);
    // Older files hold a mapping keyed by source.
    expect(suppressedSources(data, "copilot")).toEqual(["gh_cli"]);
  });

  it("fills Python's defaults for entries that lack fields", () => {
    const home = tempHome();
    writeAuth(home, {
      version: 1,
      providers: {},
      credential_pool: { deepseek: [{ id: "x", access_token: "k" }, 7] },
    });
    expect(poolRecords(readAuthStore(home).data, "deepseek")).toEqual([
      {
        id: "x",
        access_token: "k",
        label: "manual",
        auth_type: "api_key",
        priority: 0,
        source: "manual",
        ...CLEARED_STATUS,
        request_count: 0,
      },
    ]);
  });

  it("accepts a UTF-8 byte order mark, as Python's utf-8-sig does", () => {
    const home = tempHome();
    writeAuth(home, `\uFEFF${JSON.stringify({ version: 1, providers: {}, active_provider: "nous" })}`);
    expect(readAuthStore(home).data.active_provider).toBe("nous");
  });

  it.each([
    ["not JSON", "{ version: 1,", /not valid JSON/],
    ["an array", "[1, 2]", /expected a JSON object, got an array/],
    [
      "a bad pool section",
      JSON.stringify({ version: 1, credential_pool: [] }),
      /"credential_pool" should be an object/,
    ],
  ])("refuses a file that is %s, naming the file", (_what, text, message) => {
    const home = tempHome();
    const path = writeAuth(home, text);
    expect(() => readAuthStore(home)).toThrow(AuthStoreError);
    expect(() => readAuthStore(home)).toThrow(message);
    expect(() => readAuthStore(home)).toThrow(path);
  });
});

describe("updateAuthStore", () => {
  it("round-trips a Python file: unknown fields kept, one entry patched, Python's layout", async () => {
    const home = tempHome();
    writeAuth(home, PYTHON_FIXTURE);
    await updateAuthStore(
      home,
      (data) => {
        const list = data.credential_pool?.["openrouter"] as Record<string, unknown>[];
        Object.assign(list[0] as Record<string, unknown>, CLEARED_STATUS);
      },
      { now: () => 1_800_000_000 },
    );
    const text = readFileSync(join(home, "auth.json"), "utf8");
    expect(text.endsWith("}\n")).toBe(true);
    expect(text).toContain('\n  "version": 1,');
    const written = JSON.parse(text);
    expect(written.future_section).toEqual({ keep: ["me"] });
    expect(written.providers).toEqual(PYTHON_FIXTURE.providers);
    expect(written.suppressed_sources).toEqual(PYTHON_FIXTURE.suppressed_sources);
    expect(written.updated_at).toBe(new Date(1_800_000_000_000).toISOString());
    const [first, second] = written.credential_pool.openrouter;
    expect(first).toEqual({ ...PYTHON_FIXTURE.credential_pool.openrouter[0], ...CLEARED_STATUS });
    expect(second).toEqual(PYTHON_FIXTURE.credential_pool.openrouter[1]);
  });

  it("writes mode 0600, tightening a looser existing file", async () => {
    const home = tempHome();
    writeAuth(home, { version: 1, providers: {} }, 0o644);
    await updateAuthStore(home, (data) => {
      data.active_provider = "openrouter";
    });
    expect(statSync(join(home, "auth.json")).mode & 0o777).toBe(0o600);
    const fresh = tempHome();
    await updateAuthStore(fresh, (data) => {
      data.active_provider = "openrouter";
    });
    expect(statSync(join(fresh, "auth.json")).mode & 0o777).toBe(0o600);
  });

  it("never rewrites a file that does not parse", async () => {
    const home = tempHome();
    const path = writeAuth(home, '{"version": 1, "providers": {"nous": ');
    const before = readFileSync(path, "utf8");
    await expect(
      updateAuthStore(home, (data) => {
        data.active_provider = "x";
      }),
    ).rejects.toThrow(`${path}: not valid JSON`);
    expect(readFileSync(path, "utf8")).toBe(before);
  });

  it("serialises concurrent read-modify-writes", async () => {
    const home = tempHome();
    await Promise.all(
      Array.from({ length: 20 }, () =>
        updateAuthStore(home, (data) => {
          data["counter"] = ((data["counter"] as number | undefined) ?? 0) + 1;
        }),
      ),
    );
    expect(readAuthStore(home).data["counter"]).toBe(20);
  });

  it.skipIf(!python)("waits for Python Hermes holding the auth lock (<home>/auth.lock)", async () => {
    const home = tempHome();
    const child = spawn("python3", [
      "-c",
      "import fcntl,sys,time\nf=open(sys.argv[1],'a+')\nfcntl.flock(f,fcntl.LOCK_EX)\nprint('held',flush=True)\ntime.sleep(1)",
      authLockPath(home),
    ]);
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    await expect(
      updateAuthStore(
        home,
        (d) => {
          d["x"] = 1;
        },
        { timeoutMs: 150 },
      ),
    ).rejects.toBeInstanceOf(FileLockTimeoutError);
    await updateAuthStore(
      home,
      (d) => {
        d["x"] = 2;
      },
      { timeoutMs: 5000 },
    );
    expect(readAuthStore(home).data["x"]).toBe(2);
    child.kill();
  });

  it.skipIf(!python)("writes a file Python's json module reads back with the same values", async () => {
    const home = tempHome();
    await addPoolRecord(home, "openrouter", {
      id: "abc123",
      label: "ключ ☃",
      auth_type: "api_key",
      priority: 0,
      source: "manual",
      access_token: "sk-or-v1-zzzz",
      ...CLEARED_STATUS,
      request_count: 0,
    });
    const out = spawnSync("python3", [
      "-c",
      "import json,sys\nd=json.load(open(sys.argv[1],encoding='utf-8'))\ne=d['credential_pool']['openrouter'][0]\nprint(d['version'], e['label'], e['last_status'], e['request_count'])",
      join(home, "auth.json"),
    ]);
    expect(out.stdout.toString().trim()).toBe("1 ключ ☃ None 0");
  });
});

describe("pool record helpers", () => {
  const manual = (id: string, key: string) => ({
    id,
    label: id,
    auth_type: "api_key",
    priority: 0,
    source: "manual",
    access_token: key,
    ...CLEARED_STATUS,
    request_count: 0,
  });

  it("adds last, or at a position with priorities renumbered; stores borrowed entries first", async () => {
    const home = tempHome();
    await addPoolRecord(home, "deepseek", manual("aaaaaa", "k1"));
    const env = borrowedRecord({
      id: "eeeeee",
      label: "DEEPSEEK_API_KEY",
      priority: 9,
      source: "env:DEEPSEEK_API_KEY",
      key: "k-env",
    });
    await addPoolRecord(home, "deepseek", manual("bbbbbb", "k2"), { first: [env] });
    await addPoolRecord(home, "deepseek", manual("cccccc", "k3"), { position: 0 });
    const records = poolRecords(readAuthStore(home).data, "deepseek");
    const order = [...records].sort((a, b) => a.priority - b.priority).map((r) => [r.id, r.priority]);
    expect(order).toEqual([
      ["cccccc", 0],
      ["aaaaaa", 1],
      ["eeeeee", 2],
      ["bbbbbb", 3],
    ]);
    const stored = records.find((r) => r.id === "eeeeee");
    expect(stored?.access_token).toBeUndefined();
    expect(stored?.secret_fingerprint).toBe(fingerprint("k-env"));
    expect(readFileSync(join(home, "auth.json"), "utf8")).not.toContain("k-env");
  });

  it("reports a duplicate key without writing, and clears suppressions on add", async () => {
    const home = tempHome();
    writeAuth(home, {
      version: 1,
      providers: {},
      suppressed_sources: { deepseek: ["env:DEEPSEEK_API_KEY"] },
    });
    const first = await addPoolRecord(home, "deepseek", manual("aaaaaa", "k1"));
    expect(first.unsuppressed).toEqual(["env:DEEPSEEK_API_KEY"]);
    expect(readAuthStore(home).data.suppressed_sources).toBeUndefined();
    const again = await addPoolRecord(home, "deepseek", manual("bbbbbb", "k1"));
    expect(again.duplicate?.id).toBe("aaaaaa");
    expect(poolRecords(readAuthStore(home).data, "deepseek")).toHaveLength(1);
  });

  it("removes by id (or by source for a borrowed entry) and suppresses on request", async () => {
    const home = tempHome();
    await addPoolRecord(home, "deepseek", manual("aaaaaa", "k1"));
    await addPoolRecord(home, "deepseek", manual("bbbbbb", "k2"), {
      first: [
        borrowedRecord({ id: "eeeeee", label: "E", priority: 0, source: "env:DEEPSEEK_API_KEY", key: "kk" }),
      ],
    });
    expect(
      await removePoolRecord(home, "deepseek", { id: "aaaaaa", source: "manual", borrowed: false }),
    ).toBe(true);
    expect(
      await removePoolRecord(
        home,
        "deepseek",
        { id: "other-id", source: "env:DEEPSEEK_API_KEY", borrowed: true },
        { suppress: true },
      ),
    ).toBe(true);
    const { data } = readAuthStore(home);
    expect(poolRecords(data, "deepseek").map((r) => [r.id, r.priority])).toEqual([["bbbbbb", 0]]);
    expect(suppressedSources(data, "deepseek")).toEqual(["env:DEEPSEEK_API_KEY"]);
  });

  it("resets every status of one provider and counts them", async () => {
    const home = tempHome();
    writeAuth(home, PYTHON_FIXTURE);
    expect(await resetPoolStatuses(home, "openrouter")).toBe(1);
    expect(poolRecords(readAuthStore(home).data, "openrouter")[0]?.last_status).toBeNull();
    expect(await resetPoolStatuses(home, "openrouter")).toBe(0);
  });

  it.each([
    [1_700_000_000, 1_700_000_000],
    [1_700_000_000_500, 1_700_000_000.5],
    ["1700000000", 1_700_000_000],
    ["2023-11-14T22:13:20Z", 1_700_000_000],
    [0, undefined],
    ["soon", undefined],
    [null, undefined],
  ])("timestamp(%j) = %j", (input, expected) => {
    expect(timestamp(input)).toBe(expected);
  });
});
