import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { type ExpandOptions, expandReferences } from "../../../../src/agent/references/expand.js";

let root: string;
let cwd: string;
let home: string;
let options: ExpandOptions;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "hermes-refs-"));
  cwd = join(root, "work");
  home = join(root, "home", ".hermes");
  mkdirSync(join(cwd, "src", "deep"), { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(join(cwd, "src", "a.ts"), "line one\nline two\nline three\nline four\n");
  writeFileSync(join(cwd, "src", "deep", "b.md"), "# B\n");
  writeFileSync(join(cwd, "src", ".hidden"), "secret-ish\n");
  options = { cwd, home, env: { HOME: join(root, "home") }, contextLength: 100_000 };
});

describe("expandReferences", () => {
  it("leaves a message without references as it is", async () => {
    const result = await expandReferences("just words, me@example.com", options);
    expect(result.message).toBe("just words, me@example.com");
    expect(result.warnings).toEqual([]);
  });

  it("attaches a file in a fenced block after the message, keeping the reference in place", async () => {
    const result = await expandReferences("explain @file:src/a.ts please", options);
    expect(result.message.startsWith("explain @file:src/a.ts please\n\n--- Attached Context ---")).toBe(true);
    expect(result.message).toContain("📄 @file:src/a.ts");
    expect(result.message).toContain("```typescript\nline one\nline two\nline three\nline four\n\n```");
  });

  it("attaches only the lines asked for", async () => {
    const result = await expandReferences("@file:src/a.ts:2-3", options);
    expect(result.message).toContain("```typescript\nline two\nline three\n```");
    expect(result.message).not.toContain("line one");
  });

  it("lists a folder without dot entries", async () => {
    const result = await expandReferences("@folder:src", options);
    expect(result.message).toContain("📁 @folder:src");
    expect(result.message).toContain("- deep/");
    expect(result.message).toContain("  - b.md (2 lines)");
    expect(result.message).toContain("- a.ts (5 lines)");
    expect(result.message).not.toContain(".hidden");
  });

  it("turns what cannot be read into warnings the model sees", async () => {
    const result = await expandReferences("@file:missing.ts @folder:src/a.ts @file:src", options);
    expect(result.warnings).toEqual([
      "@file:missing.ts: no such file",
      "@folder:src/a.ts: not a folder (use @file:)",
      "@file:src: not a file (use @folder:)",
    ]);
    expect(result.message).toContain("--- Context Warnings ---\n- @file:missing.ts: no such file");
    expect(result.blocked).toBe(false);
  });

  it("names a binary file instead of inlining it", async () => {
    writeFileSync(join(cwd, "blob.bin"), Buffer.from([1, 2, 0, 3]));
    const result = await expandReferences("@file:blob.bin", options);
    expect(result.message).toContain("binary file");
    expect(result.message).toContain(join(cwd, "blob.bin"));
  });

  it("does not inline one file over half the context, and refuses everything together over half", async () => {
    writeFileSync(join(cwd, "big.txt"), "word ".repeat(4000)); // about 5000 tokens
    const small = { ...options, contextLength: 6000 };
    const one = await expandReferences("@file:big.txt", small);
    expect(one.blocked).toBe(false);
    expect(one.message).toContain("too large to inline");
    expect(one.message).not.toContain("word word word");

    writeFileSync(join(cwd, "mid1.txt"), "x".repeat(8000)); // 2000 tokens each, 6000 together
    writeFileSync(join(cwd, "mid2.txt"), "y".repeat(8000));
    writeFileSync(join(cwd, "mid3.txt"), "z".repeat(8000));
    const all = await expandReferences("@file:mid1.txt @file:mid2.txt @file:mid3.txt", {
      ...options,
      contextLength: 10_000,
    });
    expect(all.blocked).toBe(true);
    expect(all.message).toBe("@file:mid1.txt @file:mid2.txt @file:mid3.txt");
    expect(all.warnings.at(-1)).toMatch(/refused: \d+ tokens is over half/);

    const warned = await expandReferences("@file:mid1.txt", { ...options, contextLength: 6000 });
    expect(warned.blocked).toBe(false);
    expect(warned.warnings[0]).toMatch(/over a quarter/);
  });
});

describe("expandReferences guards", () => {
  it.each([
    ["../outside.txt", "a relative path out of the working directory"],
    ["/etc/hostname", "an absolute path elsewhere"],
    ["link-out/outside.txt", "a symlinked folder leading out"],
    ["link-file", "a symlinked file leading out"],
  ])("refuses %s (%s)", async (target) => {
    writeFileSync(join(root, "outside.txt"), "OUTSIDE CONTENT\n");
    symlinkSync(root, join(cwd, "link-out"));
    symlinkSync(join(root, "outside.txt"), join(cwd, "link-file"));
    const result = await expandReferences(`@file:${target}`, options);
    expect(result.message).not.toContain("OUTSIDE CONTENT");
    if (existsSync(target.startsWith("/") ? target : join(cwd, target)))
      expect(result.warnings[0]).toMatch(/outside the working directory/);
  });

  it("never attaches secrets, even inside the working directory", async () => {
    // The working directory is the user's home, which holds Hermes's home and ssh keys.
    const userHome = join(root, "home");
    mkdirSync(join(userHome, ".ssh"), { recursive: true });
    writeFileSync(join(userHome, ".ssh", "id_ed25519"), "PRIVATE KEY\n");
    writeFileSync(join(home, ".env"), "OPENAI_API_KEY=sk-secret\n");
    writeFileSync(join(home, "auth.json"), '{"token":"sk-secret"}\n');
    symlinkSync(join(home, ".env"), join(userHome, "innocent.txt"));
    const opts = { ...options, cwd: userHome };
    for (const ref of [
      "@file:.ssh/id_ed25519",
      "@file:.hermes/.env",
      "@file:.hermes/auth.json",
      "@file:innocent.txt",
      "@file:~/.hermes/.env",
    ]) {
      const result = await expandReferences(ref, opts);
      expect(result.message, ref).not.toMatch(/PRIVATE KEY|sk-secret/);
      expect(result.warnings[0], ref).toMatch(/secret file/);
    }
  });

  it("attaches diffs without running code from the repository's own git config", async () => {
    const git = (...args: string[]) => execFileSync("git", args, { cwd, stdio: "pipe" });
    git("init", "-q");
    git("-c", "user.email=t@t", "-c", "user.name=t", "add", "src/a.ts");
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "first");
    const marker = join(root, "pwned");
    const hook = join(root, "evil.sh");
    writeFileSync(hook, `#!/bin/sh\ntouch ${marker}\necho EVIL\n`);
    chmodSync(hook, 0o755);
    git("config", "core.fsmonitor", hook);
    git("config", "diff.external", hook);
    git("config", "core.pager", hook);
    git("config", "diff.evil.textconv", hook);
    writeFileSync(join(cwd, ".gitattributes"), "*.ts diff=evil\n");
    writeFileSync(join(cwd, "src", "a.ts"), "line one\nCHANGED\n");
    const result = await expandReferences("review @diff", options);
    expect(existsSync(marker)).toBe(false);
    expect(result.message).toContain("🧾 git diff");
    expect(result.message).toContain("+CHANGED");
    expect(result.message).not.toContain("EVIL");

    // The test's own git must not run the hostile fsmonitor either.
    git("-c", "core.fsmonitor=false", "add", "src/a.ts");
    const staged = await expandReferences("@staged", options);
    expect(staged.message).toContain("+CHANGED");
    const log = await expandReferences("@git:1", options);
    expect(log.message).toContain("first");
    expect(existsSync(marker)).toBe(false);
  });

  it("says when the folder is not a repository", async () => {
    const result = await expandReferences("@diff", { ...options, cwd: root });
    expect(result.warnings[0]).toMatch(/^@diff: .*not a git repository/i);
  });

  it("fetches @url: pages only through the fetcher given, and only http(s)", async () => {
    const seen: string[] = [];
    const fetchUrl = async (url: string) => {
      seen.push(url);
      return "PAGE TEXT";
    };
    const result = await expandReferences("@url:https://example.com/a @url:file:///etc/passwd", {
      ...options,
      fetchUrl,
    });
    expect(seen).toEqual(["https://example.com/a"]);
    expect(result.message).toContain("🌐 @url:https://example.com/a");
    expect(result.message).toContain("PAGE TEXT");
    expect(result.warnings).toEqual(["@url:file:///etc/passwd: only http(s) URLs are fetched"]);
    const none = await expandReferences("@url:https://example.com", options);
    expect(none.warnings[0]).toMatch(/not available/);
    const failing = await expandReferences("@url:https://example.com", {
      ...options,
      fetchUrl: async () => {
        throw new Error("blocked: private address");
      },
    });
    expect(failing.warnings[0]).toBe("@url:https://example.com: blocked: private address");
  });
});
