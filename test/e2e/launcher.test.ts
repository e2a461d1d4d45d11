/**
 * bin/hermes, the launcher: `--help` (the build's rendered text, or its own small bundle on a
 * terminal) says what the full CLI says, and
 * the V8 code cache is keyed so that it is reused for the same bundle and never for another one,
 * not even one of the same length (V8 itself checks only the length), and grows with each kind of
 * command that runs (rate-limited), so the first command after an install does not decide it.
 */
import { execFileSync, spawn } from "node:child_process";
import {
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply, startFakeLlm } from "../support/fake-llm.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** Runs `node <root>/bin/hermes args` for a copy of the package at `root`. */
function runCopy(root: string, args: string[], env: Record<string, string>): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(root, "bin", "hermes"), ...args], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

/** A copy of the launcher and the CLI bundle (`hermes help` needs nothing from node_modules). */
function packageCopy(): { root: string; bundle: string; env: Record<string, string>; cacheDir: string } {
  const root = mkdtempSync(join(tmpdir(), "hermes-launcher-"));
  cpSync(join(ROOT, "bin"), join(root, "bin"), { recursive: true });
  mkdirSync(join(root, "dist", "cli"), { recursive: true });
  for (const name of ["hermes.cjs", "help.cjs", "help.txt"]) {
    cpSync(join(ROOT, "dist", "cli", name), join(root, "dist", "cli", name));
  }
  cpSync(join(ROOT, "package.json"), join(root, "package.json"));
  const home = join(root, "home");
  mkdirSync(home);
  const cache = join(root, "xdg-cache");
  return {
    root,
    bundle: join(root, "dist", "cli", "hermes.cjs"),
    env: { HOME: home, HERMES_HOME: home, XDG_CACHE_HOME: cache },
    cacheDir: join(cache, "hermes-ts"),
  };
}

const cacheFiles = (dir: string) => readdirSync(dir).filter((n) => n.endsWith(".v8"));

describe("bin/hermes", () => {
  it("prints the same help from its small help bundle as the full CLI's `hermes help`", async () => {
    const { home, cwd } = tempHome();
    const small = await runHermes(["--help"], { home, cwd });
    const full = await runHermes(["help"], { home, cwd });
    expect(small.code).toBe(0);
    expect(full.code).toBe(0);
    expect(small.stdout).toContain("Usage: hermes");
    expect(small.stdout).toBe(full.stdout);
  });

  it("prints the build's rendered help when stdout is not a terminal, and the bundle's without it", async () => {
    const copy = packageCopy();
    const rendered = readFileSync(join(copy.root, "dist", "cli", "help.txt"), "utf8");
    const fromText = await runCopy(copy.root, ["--help"], copy.env);
    expect(fromText).toEqual({ code: 0, stdout: rendered, stderr: "" });
    // A package without the text (an older build) still answers, from help.cjs.
    rmSync(join(copy.root, "dist", "cli", "help.txt"));
    const fromBundle = await runCopy(copy.root, ["-h"], copy.env);
    expect(fromBundle).toEqual({ code: 0, stdout: rendered, stderr: "" });
    // The rendered text is what the full CLI prints too, and carries the version of the package.
    const full = await runCopy(copy.root, ["help"], copy.env);
    expect(full.stdout).toBe(rendered);
    expect((await runCopy(copy.root, ["--version"], copy.env)).stdout).toBe(
      `hermes ${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version}\n`,
    );
  });

  it("wraps help to a terminal's width, which the rendered text (80 columns) cannot", () => {
    const atWidth = (columns: number, args: string) =>
      execFileSync(
        "script",
        [
          "-qc",
          `stty cols ${columns}; ${process.execPath} ${join(ROOT, "bin", "hermes")} ${args}`,
          "/dev/null",
        ],
        {
          env: { PATH: process.env.PATH ?? "/usr/bin:/bin", NO_COLOR: "1", HOME: tmpdir() },
          encoding: "utf8",
        },
      ).replaceAll("\r", "");
    const rendered = readFileSync(join(ROOT, "dist", "cli", "help.txt"), "utf8");
    const wide = atWidth(120, "--help");
    expect(wide).toContain("Usage: hermes");
    expect(wide).not.toBe(rendered);
    expect(wide).toBe(atWidth(120, "help"));
    expect(atWidth(80, "--help")).toBe(rendered);
  });

  it("stops quietly when the reader of --help or --version is already gone", () => {
    const bin = join(ROOT, "bin", "hermes");
    for (const flag of ["--help", "--version"]) {
      // `true` exits before node has started, so the write meets a closed pipe (EPIPE).
      const script = `set -o pipefail; "${process.execPath}" "${bin}" ${flag} 2>"$ERR" | true; echo "exit $?"`;
      const errFile = join(mkdtempSync(join(tmpdir(), "hermes-epipe-")), "stderr");
      const out = execFileSync("bash", ["-c", script], {
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ERR: errFile },
      });
      expect(out).toBe("exit 0\n");
      expect(readFileSync(errFile, "utf8")).toBe("");
    }
  });

  it("keeps one code cache per bundle, named by the build id the build wrote into it", async () => {
    const copy = packageCopy();
    const id = /\/\/# hermes-build-id=([0-9a-f]{64})\n/.exec(readFileSync(copy.bundle, "latin1"))?.[1];
    expect(id).toBeDefined();
    const first = await runCopy(copy.root, ["help"], copy.env);
    expect(first.code).toBe(0);
    const [cache] = cacheFiles(copy.cacheDir);
    expect(cache?.startsWith(id?.slice(0, 32) ?? "-")).toBe(true);
    // Reused, not rewritten, by the next start.
    const written = statSync(join(copy.cacheDir, cache ?? "")).mtimeMs;
    const second = await runCopy(copy.root, ["help"], copy.env);
    expect(second.stdout).toBe(first.stdout);
    expect(cacheFiles(copy.cacheDir)).toEqual([cache]);
    expect(statSync(join(copy.cacheDir, cache ?? "")).mtimeMs).toBe(written);
  });

  it("never runs a stale cache for a bundle edited after the build, even at the same length", async () => {
    const copy = packageCopy();
    const before = await runCopy(copy.root, ["help"], copy.env);
    expect(before.stdout).toContain("Hermes: a self-improving AI agent");
    const [oldCache] = cacheFiles(copy.cacheDir);
    // Same length, same build id line: only the file's stamp tells the two apart.
    const text = readFileSync(copy.bundle, "latin1");
    const edited = text.replace("Hermes: a self-improving AI agent", "HERMES: A SELF-IMPROVING AI AGENT");
    expect(edited.length).toBe(text.length);
    writeFileSync(copy.bundle, edited, "latin1");
    const later = new Date(statSync(copy.bundle).mtimeMs + 5_000);
    utimesSync(copy.bundle, later, later);
    const after = await runCopy(copy.root, ["help"], copy.env);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain("HERMES: A SELF-IMPROVING AI AGENT");
    // The old bundle's cache is gone; the new one has its own.
    expect(cacheFiles(copy.cacheDir)).toHaveLength(1);
    expect(cacheFiles(copy.cacheDir)[0]).not.toBe(oldCache);
    expect(readdirSync(copy.cacheDir).filter((n) => n.endsWith(".kinds"))).toEqual([
      `${cacheFiles(copy.cacheDir)[0]}.kinds`,
    ]);
  });

  it("adds a new kind of command's functions to the cache, at most once per 10 s", async () => {
    const copy = packageCopy();
    await runCopy(copy.root, ["help"], copy.env);
    const [name] = cacheFiles(copy.cacheDir);
    const cache = join(copy.cacheDir, name ?? "");
    const kinds = () => JSON.parse(readFileSync(`${cache}.kinds`, "utf8"));
    expect(kinds()).toEqual(["help"]);
    const helpOnly = statSync(cache).size;
    const backdate = () => {
      const past = new Date(Date.now() - 60_000);
      utimesSync(cache, past, past);
      return statSync(cache).mtimeMs;
    };
    // Right after a write, another kind waits for a later start.
    const written = statSync(cache).mtimeMs;
    expect((await runCopy(copy.root, ["config", "path"], copy.env)).code).toBe(0);
    expect(statSync(cache).mtimeMs).toBe(written);
    expect(kinds()).toEqual(["help"]);
    // Later it is added, and the cache keeps what `help` compiled.
    backdate();
    expect((await runCopy(copy.root, ["config", "path"], copy.env)).code).toBe(0);
    expect(kinds()).toEqual(["help", "config"]);
    expect(statSync(cache).size).toBeGreaterThan(helpOnly);
    // Kinds already in it leave it alone.
    const old = backdate();
    for (const args of [["help"], ["config", "path"]]) await runCopy(copy.root, args, copy.env);
    expect(statSync(cache).mtimeMs).toBe(old);
    // A list that cannot be read counts as none: the next start rewrites it with its own kind.
    writeFileSync(`${cache}.kinds`, "{broken");
    backdate();
    const one = await runCopy(copy.root, ["help"], copy.env);
    expect(one.code).toBe(0);
    expect(kinds()).toEqual(["help"]);
    expect(readdirSync(copy.cacheDir).filter((n) => n.includes(".tmp"))).toEqual([]);
  });

  it("a chat raises V8's tier-up threshold, and the cache it writes is still taken by the next start", async () => {
    const copy = packageCopy();
    // A chat needs the package's modules and skills beside the copy.
    for (const name of ["node_modules", "skills", "optional-skills"]) {
      symlinkSync(join(ROOT, name), join(copy.root, name));
    }
    const llm = await startFakeLlm();
    try {
      writeFileSync(join(copy.env.HOME ?? "", "config.yaml"), fakeProviderConfig(llm.url));
      llm.enqueue(reply().toolCall("todo", { todos: [{ id: "a", content: "x", status: "pending" }] }));
      llm.enqueue(reply().text("first"));
      const first = await runCopy(copy.root, ["-z", "go"], copy.env);
      expect(first.stderr).toBe("");
      expect(first.stdout).toBe("first\n");
      const [name] = cacheFiles(copy.cacheDir);
      const cache = join(copy.cacheDir, name ?? "");
      expect(JSON.parse(readFileSync(`${cache}.kinds`, "utf8"))).toEqual(["-z"]);
      const written = statSync(cache).mtimeMs;
      // A cache V8 refused (made under other flags) would be written again at this start's exit.
      llm.enqueue(reply().text("second"));
      const second = await runCopy(copy.root, ["-z", "again"], copy.env);
      expect(second.stdout).toBe("second\n");
      expect(statSync(cache).mtimeMs).toBe(written);
    } finally {
      await llm.close();
    }
  });

  it("hashes a bundle that carries no build id, and survives a corrupt or unwritable cache", async () => {
    const copy = packageCopy();
    const text = readFileSync(copy.bundle, "latin1");
    writeFileSync(copy.bundle, text.replace(/\/\/# hermes-build-id=[0-9a-f]{64}\n/, ""), "latin1");
    const first = await runCopy(copy.root, ["help"], copy.env);
    expect(first.code).toBe(0);
    const [cache] = cacheFiles(copy.cacheDir);
    expect(cache).toMatch(/^[0-9a-f]{32}-/);
    // Garbage where the cache was: V8 rejects it, the command still runs, the cache is rewritten.
    writeFileSync(join(copy.cacheDir, cache ?? ""), "not a code cache");
    const second = await runCopy(copy.root, ["help"], copy.env);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(statSync(join(copy.cacheDir, cache ?? "")).size).toBeGreaterThan(1000);
    // A cache directory that cannot be made (a file is in the way) only costs speed.
    const blocked = { ...copy.env, XDG_CACHE_HOME: join(copy.root, "package.json") };
    const third = await runCopy(copy.root, ["help"], blocked);
    expect(third.code).toBe(0);
    expect(third.stdout).toBe(first.stdout);
  });
});
