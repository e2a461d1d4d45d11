import { spawn } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RotatingFile } from "../../../src/util/rotating-file.js";

const fresh = () => mkdtempSync(join(tmpdir(), "hermes-rotate-"));
const line = (n: number) => `line ${String(n).padStart(3, "0")} ${"x".repeat(20)}\n`; // 30 bytes

describe("RotatingFile", () => {
  it("rotates by size into .1, .2, .3 like Python's RotatingFileHandler and drops the oldest", () => {
    const dir = fresh();
    const path = join(dir, "agent.log");
    const file = new RotatingFile(path, { maxBytes: 100, backupCount: 3 });
    for (let i = 0; i < 20; i++) file.append(line(i));
    file.close();
    expect(readdirSync(dir).sort()).toEqual(["agent.log", "agent.log.1", "agent.log.2", "agent.log.3"]);
    // Three 30-byte lines fit in 100 bytes; the fourth starts a new file.
    expect(readFileSync(path, "utf8")).toBe(line(18) + line(19));
    expect(readFileSync(`${path}.1`, "utf8")).toBe(line(15) + line(16) + line(17));
    expect(readFileSync(`${path}.3`, "utf8")).toBe(line(9) + line(10) + line(11));
    for (const name of readdirSync(dir)) expect(statSync(join(dir, name)).size).toBeLessThanOrEqual(100);
  });

  it("creates files 0600 and never rotates with maxBytes 0", () => {
    const dir = fresh();
    const path = join(dir, "errors.log");
    const file = new RotatingFile(path, { maxBytes: 0, backupCount: 3 });
    for (let i = 0; i < 50; i++) file.append(line(i));
    expect(readdirSync(dir)).toEqual(["errors.log"]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(path).size).toBe(50 * 30);
  });

  it("with backupCount 0 starts the file over instead of growing without bound", () => {
    const dir = fresh();
    const path = join(dir, "agent.log");
    const file = new RotatingFile(path, { maxBytes: 100, backupCount: 0 });
    for (let i = 0; i < 7; i++) file.append(line(i));
    expect(readdirSync(dir)).toEqual(["agent.log"]);
    expect(readFileSync(path, "utf8")).toBe(line(6));
  });

  it("keeps a single line larger than maxBytes whole", () => {
    const dir = fresh();
    const path = join(dir, "agent.log");
    const file = new RotatingFile(path, { maxBytes: 10, backupCount: 1 });
    file.append(line(1));
    file.append(line(2));
    expect(readFileSync(path, "utf8")).toBe(line(2));
    expect(readFileSync(`${path}.1`, "utf8")).toBe(line(1));
  });

  it("follows the path when another process rotated or removed the file", () => {
    const dir = fresh();
    const path = join(dir, "agent.log");
    const file = new RotatingFile(path, { maxBytes: 1000, backupCount: 3, recheckMs: 0 });
    file.append(line(1));
    renameSync(path, `${path}.1`); // what another writer's rotation does
    file.append(line(2));
    expect(readFileSync(path, "utf8")).toBe(line(2));
    expect(readFileSync(`${path}.1`, "utf8")).toBe(line(1));
  });

  it("counts lines other writers appended when deciding to rotate", () => {
    const dir = fresh();
    const path = join(dir, "agent.log");
    const file = new RotatingFile(path, { maxBytes: 100, backupCount: 2, recheckMs: 0 });
    file.append(line(1));
    writeFileSync(path, line(2) + line(3), { flag: "a" }); // another process
    file.append(line(4));
    expect(readFileSync(`${path}.1`, "utf8")).toBe(line(1) + line(2) + line(3));
    expect(readFileSync(path, "utf8")).toBe(line(4));
  });

  it("checks for another process's rotation at most every recheckMs: lines in between land in .1", async () => {
    const dir = fresh();
    const path = join(dir, "agent.log");
    const file = new RotatingFile(path, { maxBytes: 1000, backupCount: 3, recheckMs: 200 });
    file.append(line(1));
    renameSync(path, `${path}.1`); // another writer's rotation
    file.append(line(2)); // inside the window: still the old descriptor, so the rotated file
    expect(existsSync(path)).toBe(false);
    expect(readFileSync(`${path}.1`, "utf8")).toBe(line(1) + line(2));
    await new Promise((ok) => setTimeout(ok, 250));
    file.append(line(3)); // the window passed: the stat sees the new inode and follows the path
    expect(readFileSync(path, "utf8")).toBe(line(3));
    expect(readFileSync(`${path}.1`, "utf8")).toBe(line(1) + line(2));
  });

  it("inside the window, rotates when its own byte count says the file is full", () => {
    const dir = fresh();
    const path = join(dir, "agent.log");
    const file = new RotatingFile(path, { maxBytes: 100, backupCount: 2, recheckMs: 60_000 });
    file.append(line(1));
    writeFileSync(path, line(2), { flag: "a" }); // another process; not seen until a stat
    file.append(line(3)); // own count 30 + 30 fits: no stat
    file.append(line(4)); // own count 60 + 30 fits: no stat, the file holds 120 bytes
    file.append(line(5)); // own count 90 + 30 passes 100: stat (120 real), rotate
    expect(readFileSync(`${path}.1`, "utf8")).toBe(line(1) + line(2) + line(3) + line(4));
    expect(readFileSync(path, "utf8")).toBe(line(5));
  });

  it("two processes rotating one file with the default window lose, double or tear no line", async () => {
    const dir = fresh();
    const path = join(dir, "agent.log");
    const worker = resolve(import.meta.dirname, "../../support/log-append-worker.ts");
    const count = 3000;
    const start = (tag: string) =>
      spawn(process.execPath, ["--import", "tsx", worker, path, tag, String(count), "2000", "400"], {
        stdio: ["pipe", "pipe", "inherit"],
      });
    const children = [start("A"), start("B")];
    await Promise.all(children.map((c) => new Promise<void>((ok) => c.stdout.once("data", () => ok()))));
    const exits = children.map((c) => new Promise<number | null>((ok) => c.on("exit", ok)));
    for (const c of children) c.stdin.write("go\n");
    expect(await Promise.all(exits)).toEqual([0, 0]);

    const names = readdirSync(dir);
    const seen = new Map<string, number>();
    for (const name of names) {
      const text = readFileSync(join(dir, name), "utf8");
      expect(text.endsWith("\n")).toBe(true);
      for (const l of text.split("\n").slice(0, -1)) {
        expect(l).toMatch(/^[AB] \d+ x{40}$/);
        seen.set(l, (seen.get(l) ?? 0) + 1);
      }
    }
    expect(seen.size).toBe(2 * count);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    // Each writer stats before its own count passes the limit, so a file holds at most its own
    // share plus the other writer's since its last stat: about twice the limit, never unbounded.
    for (const name of names) expect(statSync(join(dir, name)).size).toBeLessThanOrEqual(2 * 2000 + 2 * 47);
    const backups = names.filter((n) => n !== "agent.log").length;
    for (let i = 1; i <= backups; i++) expect(statSync(`${path}.${i}`).size).toBeGreaterThan(0);
    expect(backups).toBeGreaterThanOrEqual(70);
  }, 30_000);

  it("two processes appending at once rotate once per fill: no line lost, doubled or torn", async () => {
    const dir = fresh();
    const path = join(dir, "agent.log");
    const worker = resolve(import.meta.dirname, "../../support/log-append-worker.ts");
    const count = 3000;
    // Enough backups that nothing is dropped, so every line can be accounted for.
    const start = (tag: string) =>
      spawn(process.execPath, ["--import", "tsx", worker, path, tag, String(count), "2000", "200", "0"], {
        stdio: ["pipe", "pipe", "inherit"],
      });
    const children = [start("A"), start("B")];
    await Promise.all(children.map((c) => new Promise<void>((ok) => c.stdout.once("data", () => ok()))));
    const exits = children.map((c) => new Promise<number | null>((ok) => c.on("exit", ok)));
    for (const c of children) c.stdin.write("go\n");
    expect(await Promise.all(exits)).toEqual([0, 0]);

    const names = readdirSync(dir);
    const seen = new Map<string, number>();
    for (const name of names) {
      const text = readFileSync(join(dir, name), "utf8");
      expect(text.endsWith("\n")).toBe(true);
      for (const l of text.split("\n").slice(0, -1)) {
        expect(l).toMatch(/^[AB] \d+ x{40}$/);
        seen.set(l, (seen.get(l) ?? 0) + 1);
      }
    }
    expect(seen.size).toBe(2 * count);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    // Each line is 47 bytes: about 280 KB in 2 KB files. A writer that kept appending to a file
    // the other one rotated away would grow it past the limit (one line of slack per writer: a
    // line written between the other's check and its rename). A rotation done twice would leave
    // an empty or missing backup in the chain.
    for (const name of names) expect(statSync(join(dir, name)).size).toBeLessThanOrEqual(2000 + 2 * 47);
    const backups = names.filter((n) => n !== "agent.log").length;
    for (let i = 1; i <= backups; i++) {
      expect(existsSync(`${path}.${i}`)).toBe(true);
      expect(statSync(`${path}.${i}`).size).toBeGreaterThan(0);
    }
    expect(backups).toBeGreaterThanOrEqual(130);
  }, 30_000);
});
