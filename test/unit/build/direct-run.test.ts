/**
 * The CLI bundle run without bin/hermes. bin/hermes compiles dist/cli/hermes.cjs as a script whose
 * value is the bundle's function and calls it once; a user or a packager may instead run the file
 * with `node` or require it from a shim of their own, and then it must run the CLI too, not exit 0
 * having done nothing. A side bundle run alone says it is not a program (exit code 2). A bundle
 * built here from a small entry with the CLI's banner and footer shows each way in isolation.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Script } from "node:vm";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cliBundleOptions } from "../../../scripts/cli-bundle.mjs";
import { sideFooter } from "../../../scripts/side-bundles.mjs";

const ROOT = resolve(import.meta.dirname, "../../..");
const scratch = mkdtempSync(join(tmpdir(), "hermes-direct-run-"));
const pkg = join(scratch, "pkg");
const bundle = join(pkg, "dist", "cli", "hermes.cjs");
const sideFile = join(pkg, "dist", "cli", "side-probe.cjs");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function node(args: string[]): Promise<Run> {
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: scratch,
    XDG_CACHE_HOME: join(scratch, "cache"),
  };
  return new Promise((done) => {
    execFile(process.execPath, args, { cwd: scratch, env }, (error, stdout, stderr) => {
      done({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  mkdirSync(join(pkg, "bin"), { recursive: true });
  for (const file of ["bin/hermes", "bin/package.json", "package.json"]) {
    copyFileSync(join(ROOT, file), join(pkg, file));
  }
  // Each run of the bundle's body prints one line: its arguments and where it thinks it is.
  const entry = join(scratch, "entry.ts");
  writeFileSync(
    entry,
    'process.stdout.write("ran " + JSON.stringify(process.argv.slice(2)) + " from " + new URL(import.meta.url).pathname + "\\n");\n',
  );
  const { plugins: _plugins, external: _external, ...options } = cliBundleOptions;
  await build({ ...options, entryPoints: [entry], outfile: bundle, sourcemap: false });
  const sideEntry = join(scratch, "side-entry.ts");
  writeFileSync(sideEntry, 'process.stdout.write("side ran\\n");\n');
  await build({
    ...options,
    entryPoints: [sideEntry],
    outfile: sideFile,
    sourcemap: false,
    banner: { js: "(function (exports, require, module, __filename, __dirname, __hermesHost) {" },
    footer: sideFooter,
  });
}, 60_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("the CLI bundle run directly", () => {
  it("`node dist/cli/hermes.cjs ARGS` runs the CLI once with the arguments", async () => {
    const run = await node([bundle, "--version"]);
    expect(run).toEqual({ code: 0, stdout: `ran ["--version"] from ${bundle}\n`, stderr: "" });
  });

  it("a packager's shim that requires the file runs the CLI once", async () => {
    const shim = join(scratch, "shim.cjs");
    writeFileSync(shim, `require(${JSON.stringify(bundle)});\n`);
    const run = await node([shim, "sessions", "list"]);
    expect(run).toEqual({ code: 0, stdout: `ran ["sessions","list"] from ${bundle}\n`, stderr: "" });
  });

  it("bin/hermes still gets the function and runs it exactly once", async () => {
    const run = await node([join(pkg, "bin", "hermes"), "-z", "hi"]);
    expect(run).toEqual({ code: 0, stdout: `ran ["-z","hi"] from ${bundle}\n`, stderr: "" });
    // A second start (its code cache written by the first) is the same.
    expect(await node([join(pkg, "bin", "hermes"), "-z", "hi"])).toEqual(run);
  });

  it("compiled as a script, the file's value is the bundle's function and nothing runs", () => {
    const text = readFileSync(bundle, "latin1");
    expect(text.startsWith("(function (exports, require, module, __filename, __dirname) {")).toBe(true);
    const value: unknown = new Script(text, { filename: bundle }).runInThisContext();
    expect(typeof value).toBe("function");
    expect((value as (...args: unknown[]) => unknown).length).toBe(5);
  });
});

describe("a side bundle run directly", () => {
  it("says it is part of hermes and how to start hermes, with exit code 2, and runs nothing", async () => {
    const run = await node([sideFile]);
    expect(run).toEqual({
      code: 2,
      stdout: "",
      stderr: `hermes: ${sideFile} is a part of the hermes CLI loaded on demand, not a program; start hermes with bin/hermes\n`,
    });
  });

  it("compiled by the side loader, its value is the function and nothing is printed", () => {
    const text = readFileSync(sideFile, "latin1");
    const value: unknown = new Script(text, { filename: sideFile }).runInThisContext();
    expect(typeof value).toBe("function");
    expect(process.exitCode).toBeUndefined();
  });
});
