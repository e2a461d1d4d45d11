/**
 * The Daytona channel and files over the real `@daytonaio/sdk`, against the loopback fake of the
 * Daytona API and toolbox daemon (test/support/fake-daytona.ts; the "sandbox" is a temp dir here).
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Daytona, type Sandbox } from "@daytonaio/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createDaytonaChannel,
  daemonQuote,
  splitExecOutput,
} from "../../../src/environments/daytona/channel.js";
import { createDaytonaFiles, fileTypeOf, toFileStat } from "../../../src/environments/daytona/files.js";
import type { ChannelProcess } from "../../../src/environments/types.js";
import { type FakeDaytona, parseDaemonCommand, startFakeDaytona } from "../../support/fake-daytona.js";

let fake: FakeDaytona;
let daytona: Daytona;
let sandbox: Sandbox;

beforeAll(async () => {
  fake = await startFakeDaytona();
  daytona = new Daytona({ apiKey: fake.apiKey, apiUrl: fake.apiUrl, target: "us" });
  sandbox = await daytona.create({ image: "debian:12", name: "channel-test" }, { timeout: 30 });
});

afterAll(async () => {
  await sandbox?.delete().catch(() => undefined);
  await daytona?.[Symbol.asyncDispose]();
  await fake?.close();
});

function lines(stream: NodeJS.ReadableStream): { next(match: RegExp): Promise<string>; text(): string } {
  let text = "";
  const waiters: { match: RegExp; resolve: (s: string) => void }[] = [];
  stream.on("data", (chunk: Buffer | string) => {
    text += chunk.toString();
    for (const w of [...waiters]) {
      const m = w.match.exec(text);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m[0]);
      }
    }
  });
  return {
    next: (match) =>
      new Promise((resolve) => {
        const m = match.exec(text);
        if (m) resolve(m[0]);
        else waiters.push({ match, resolve });
      }),
    text: () => text,
  };
}

describe("quoting for the daemon's /process/execute splitter", () => {
  it.each([["plain"], ["it's"], [`a "b" 'c' d`], ["$HOME `x` \\n"], ["two  spaces\nnewline"], ["''"], [""]])(
    "%j survives as one word",
    (word) => {
      expect(parseDaemonCommand(`echo ${daemonQuote(word)}`)).toEqual(
        word === "" ? ["echo"] : ["echo", word],
      );
    },
  );

  it("splits the merged result at the last marker", () => {
    expect(splitExecOutput("out__M__err", "__M__")).toEqual({ stdout: "out", stderr: "err" });
    expect(splitExecOutput("a__M__b__M__c", "__M__")).toEqual({ stdout: "a__M__b", stderr: "c" });
    expect(splitExecOutput("no marker", "__M__")).toEqual({ stdout: "no marker", stderr: "" });
  });
});

describe("the sandbox lifecycle through the SDK", () => {
  it("creates from the image with the resources asked, and waits until started", () => {
    const created = [...fake.sandboxes.values()].find((s) => s.name === "channel-test");
    expect(created?.created["image"]).toBe("debian:12");
    expect(created?.state).toBe("started");
    expect(fake.requests).toContain("POST /api/sandbox");
  });
});

describe("exec over /process/execute", () => {
  it("keeps stdout and stderr apart and reports the exit code", async () => {
    const channel = createDaytonaChannel(sandbox);
    const result = await channel.exec("echo out; echo err >&2; exit 3");
    expect(result.stdout.toString()).toBe("out\n");
    expect(result.stderr).toBe("err\n");
    expect(result.exitCode).toBe(3);
  });

  it("passes quotes, dollars and newlines through unharmed, in the cwd asked", async () => {
    const channel = createDaytonaChannel(sandbox);
    const result = await channel.exec(`printf '%s|' "it's" '$HOME' "a  b"; echo; pwd`, { cwd: "/tmp" });
    expect(result.stdout.toString()).toBe("it's|$HOME|a  b|\n/tmp\n");
  });

  it("feeds stdin (uploaded first, since the API has none)", async () => {
    const channel = createDaytonaChannel(sandbox);
    const result = await channel.exec("tr a-z A-Z", { stdin: "hello\nworld\n" });
    expect(result.stdout.toString()).toBe("HELLO\nWORLD\n");
  });

  it("a timeout stops the whole process group, not just bash", async () => {
    const channel = createDaytonaChannel(sandbox);
    const marker = join(sandbox.id === "" ? "/tmp" : "/tmp", `daytona-timeout-${Date.now()}`);
    const started = Date.now();
    const result = await channel.exec(`(sleep 3; touch ${marker}) & sleep 30`, { timeoutMs: 1000 });
    expect(result.exitCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(10_000);
    // The backgrounded child was in the group: it never gets to touch the file.
    const check = await channel.exec(`sleep 3; test -e ${marker} && echo survived || echo gone`);
    expect(check.stdout.toString().trim()).toBe("gone");
  });

  it("an interrupt kills the command's process group through a second call", async () => {
    const channel = createDaytonaChannel(sandbox);
    const controller = new AbortController();
    const started = Date.now();
    const pending = channel.exec("sleep 30 & sleep 30; echo never", { signal: controller.signal });
    setTimeout(() => controller.abort(), 500);
    const result = await pending;
    expect(result.exitCode).toBeNull();
    expect(result.stdout.toString()).not.toContain("never");
    expect(Date.now() - started).toBeLessThan(8000);
  });
});

describe("open over a toolbox session", () => {
  async function openBash(): Promise<{
    proc: ChannelProcess;
    out: ReturnType<typeof lines>;
    err: ReturnType<typeof lines>;
  }> {
    const channel = createDaytonaChannel(sandbox);
    const proc = channel.open(["bash", "--noprofile", "--norc"], { env: { GREETING: "hi there" } });
    return { proc, out: lines(proc.stdout), err: lines(proc.stderr) };
  }

  it("is one persistent bash: state carries over between writes; stderr apart; exit code back", async () => {
    const { proc, out, err } = await openBash();
    proc.stdin.write('echo "$GREETING"\n');
    expect(await out.next(/hi there\n/)).toBe("hi there\n");
    proc.stdin.write("cd /tmp && X=42\n");
    proc.stdin.write('echo "$PWD $X"; echo oops >&2\n');
    expect(await out.next(/\/tmp 42\n/)).toBe("/tmp 42\n");
    expect(await err.next(/oops\n/)).toBe("oops\n");
    proc.stdin.write("exit 7\n");
    expect(await proc.exited).toBe(7);
    expect(out.text()).not.toContain("exit 7"); // suppressInputEcho: input is not echoed into stdout
  });

  it("a write split mid-line arrives as one line", async () => {
    const { proc, out } = await openBash();
    proc.stdin.write("echo spl");
    proc.stdin.write("it\n");
    expect(await out.next(/split\n/)).toBe("split\n");
    proc.close();
    expect(await proc.exited).toBeNull();
  });

  it("close() ends the session and everything in it", async () => {
    const { proc, out } = await openBash();
    proc.stdin.write("sleep 60 & echo $!\n");
    const pid = Number((await out.next(/\d+\n/)).trim());
    proc.close();
    expect(await proc.exited).toBeNull();
    // Gone (or a zombie awaiting its reaper) within the daemon's grace period.
    const check = await createDaytonaChannel(sandbox).exec(
      `for i in $(seq 50); do case "$(ps -o stat= -p ${pid})" in ""|Z*) echo gone; exit;; esac; sleep 0.1; done; echo alive`,
    );
    expect(check.stdout.toString().trim()).toBe("gone");
  });
});

describe("files through the SDK's file calls", () => {
  it("writes (parents created), reads, stats and lists", async () => {
    const files = createDaytonaFiles(sandbox);
    const dir = `/tmp/daytona-files-${Date.now()}`;
    await files.write(`${dir}/a/b.txt`, "hello\n");
    expect((await files.read(`${dir}/a/b.txt`)).toString()).toBe("hello\n");
    expect((await files.read(`${dir}/a/b.txt`, { maxBytes: 3 })).toString()).toBe("hel");
    const info = await files.stat(`${dir}/a/b.txt`);
    expect(info).toMatchObject({ type: "file", size: 6, mode: 0o644 });
    expect(Math.abs((info?.mtimeMs ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(await files.stat(`${dir}/a`)).toMatchObject({ type: "dir" });
    expect(await files.list(dir)).toEqual([{ name: "a", type: "dir" }]);
    await files.remove(dir);
    expect(existsSync(dir)).toBe(false);
    await files.remove(dir); // nothing there: silent
  });

  it("round-trips binary bytes and keeps an existing file's mode", async () => {
    const files = createDaytonaFiles(sandbox);
    const path = `/tmp/daytona-bin-${Date.now()}`;
    const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 13, 0x80]);
    await files.write(path, bytes, { mode: 0o600 });
    expect((await files.stat(path))?.mode).toBe(0o600);
    expect(Buffer.compare(await files.read(path), bytes)).toBe(0);
    await files.write(path, "again");
    expect((await files.stat(path))?.mode).toBe(0o600);
    await files.remove(path);
  });

  it("missing paths and directories fail like Node's fs", async () => {
    const files = createDaytonaFiles(sandbox);
    expect(await files.stat("/nonexistent/x")).toBeUndefined();
    await expect(files.read("/nonexistent/x")).rejects.toMatchObject({ code: "ENOENT" });
    await expect(files.read("/tmp")).rejects.toMatchObject({ code: "EISDIR" });
    await expect(files.list("/etc/hostname")).rejects.toMatchObject({ code: "ENOTDIR" });
    await expect(files.write("/tmp", "x")).rejects.toMatchObject({ code: "EISDIR" });
  });

  it("reads the daemon's FileInfo shapes", () => {
    expect(fileTypeOf({ isDir: false, mode: "Lrwxrwxrwx" })).toBe("symlink");
    expect(fileTypeOf({ isDir: false, mode: "prw-r--r--" })).toBe("other");
    const stat = toFileStat({
      name: "x",
      size: 3,
      mode: "-rwxr-x---",
      modTime: "2025-01-02T03:04:05.123456789Z",
      modifiedAt: "",
      isDir: false,
      owner: "0",
      group: "0",
      permissions: "0750",
    });
    expect(stat).toEqual({
      type: "file",
      size: 3,
      mode: 0o750,
      mtimeMs: Date.parse("2025-01-02T03:04:05.123Z"),
    });
  });
});
