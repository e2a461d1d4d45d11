/** Sharing a home with Python Hermes and with other processes. */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../../../src/knowledge/memory/store.js";

const python = spawnSync("python3", ["-c", "import fcntl"]).status === 0;
const repoRoot = resolve(import.meta.dirname, "../../../..");
const storeUrl = pathToFileURL(join(repoRoot, "src/knowledge/memory/store.ts")).href;

/** Python Hermes's reader: split on the delimiter line, strip, drop empties (dedupe keeping first). */
const PY_READ = `
import json, sys
raw = open(sys.argv[1], encoding="utf-8").read()
entries = [e.strip() for e in raw.split("\\n\\u00a7\\n")]
print(json.dumps(list(dict.fromkeys(e for e in entries if e))))
`;

/** Python Hermes's writer: entries joined by the delimiter, no trailing newline. */
const PY_WRITE = `
import json, sys
open(sys.argv[1], "w", encoding="utf-8").write("\\n\\u00a7\\n".join(json.loads(sys.argv[2])))
`;

const pythonEntries = [
  "User's projects live in ~/code",
  "Build: npm run build\nTest: npm test\n  (indented note)",
  "Pricing is 5 § per seat; § is the section sign",
  "Café ☕ and emoji 🙂 are fine",
];

function home(): string {
  return mkdtempSync(join(tmpdir(), "hermes-memory-compat-"));
}

describe("Python Hermes compatibility", () => {
  it("reads a file laid out the way Python Hermes writes it as the same entries", () => {
    const h = home();
    mkdirSync(join(h, "memories"));
    writeFileSync(join(h, "memories", "MEMORY.md"), pythonEntries.join("\n§\n"));
    expect(MemoryStore.forHome(h).entries("memory")).toEqual(pythonEntries);
  });

  it.skipIf(!python)("reads what Python itself wrote", () => {
    const h = home();
    mkdirSync(join(h, "memories"));
    const file = join(h, "memories", "USER.md");
    expect(spawnSync("python3", ["-c", PY_WRITE, file, JSON.stringify(pythonEntries)]).status).toBe(0);
    expect(MemoryStore.forHome(h).entries("user")).toEqual(pythonEntries);
  });

  it.skipIf(!python)("writes files that Python's parser reads as the same entries", async () => {
    const h = home();
    const store = MemoryStore.forHome(h);
    for (const entry of pythonEntries) await store.add("memory", entry);
    await store.replace("memory", "Café", "Café ☕ and emoji 🙂 are fine, twice 🙂");
    const out = spawnSync("python3", ["-c", PY_READ, store.path("memory")], { encoding: "utf8" });
    expect(out.status).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual(store.entries("memory"));
    expect(store.entries("memory")).toHaveLength(4);
  });

  it.skipIf(!python)("waits for a Python process holding the lock and keeps the entry it wrote", async () => {
    const h = home();
    const store = MemoryStore.forHome(h);
    const file = store.path("memory");
    mkdirSync(store.dir, { recursive: true });
    // Holds the flock Python Hermes takes, writes an entry under it when told, then releases it.
    const child = spawn("python3", [
      "-c",
      [
        "import fcntl, sys",
        "f = open(sys.argv[1] + '.lock', 'a+')",
        "fcntl.flock(f, fcntl.LOCK_EX)",
        "print('held', flush=True)",
        "sys.stdin.readline()",
        "open(sys.argv[1], 'w', encoding='utf-8').write('written by python')",
        "fcntl.flock(f, fcntl.LOCK_UN)",
      ].join("\n"),
      file,
    ]);
    await new Promise<void>((done) => child.stdout.once("data", () => done()));
    let settled = false;
    const adding = store.add("memory", "written by node").finally(() => {
      settled = true;
    });
    // Give a store that ignored the lock time to write; a correct one is still waiting.
    await new Promise((r) => setTimeout(r, 150));
    expect(settled).toBe(false);
    child.stdin.end("go\n");
    expect((await adding).success).toBe(true);
    expect(readFileSync(file, "utf8")).toBe("written by python\n§\nwritten by node");
  });
});

describe("several processes writing at once", () => {
  it("loses no entry when child processes add concurrently", async () => {
    const h = home();
    const dir = mkdtempSync(join(tmpdir(), "hermes-memory-child-"));
    const script = join(dir, "child.mjs");
    writeFileSync(
      script,
      [
        "const { MemoryStore } = await import(process.argv[2]);",
        "const store = MemoryStore.forHome(process.argv[3], { memory_char_limit: 100000 });",
        "for (let i = 0; i < 6; i++) {",
        "  const r = await store.add('memory', 'child ' + process.argv[4] + ' entry ' + i);",
        "  if (!r.success) { console.error(JSON.stringify(r)); process.exit(1); }",
        "}",
      ].join("\n"),
    );
    const run = (name: string) =>
      new Promise<{ code: number | null; stderr: string }>((done) => {
        const child = spawn(process.execPath, ["--import", "tsx", script, storeUrl, h, name], {
          cwd: repoRoot,
        });
        let stderr = "";
        child.stderr.on("data", (d) => {
          stderr += String(d);
        });
        child.on("close", (code) => done({ code, stderr }));
      });
    const names = ["a", "b", "c", "d"];
    const results = await Promise.all(names.map(run));
    for (const r of results) expect(r).toEqual({ code: 0, stderr: "" });
    const entries = MemoryStore.forHome(h).entries("memory");
    const expected = names.flatMap((n) => Array.from({ length: 6 }, (_, i) => `child ${n} entry ${i}`));
    expect(entries.sort()).toEqual(expected.sort());
  });
});
