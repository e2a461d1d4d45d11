/**
 * `@` context references in one-shot runs (`-z`, `-q`, prompt words) through the built CLI: the
 * file's text reaches the model after the prompt, stdout stays the answer alone; the REPL's guards
 * hold (outside the working directory, secrets through a symlink, the size limit refuses before
 * any request); a prompt piped on stdin is data and is never expanded. `@folder:`, `@diff`,
 * `@staged` and `@url:` attach a listing, the working tree's and the index's diffs and a page.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

type Body = { messages: Array<{ role: string; content: unknown }> };
/** The text of the last user message of the last model request. */
function sentText(): string {
  const messages = (llm.chatRequests.at(-1)?.body as Body | undefined)?.messages ?? [];
  const content = messages.filter((m) => m.role === "user").at(-1)?.content;
  return typeof content === "string" ? content : JSON.stringify(content);
}

describe("@ references in one-shot prompts", () => {
  it("-z attaches a file (a line range too) and prints only the answer; -q says what it attached", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    writeFileSync(join(h.cwd, "notes.txt"), "alpha line\nbeta line\ngamma line\n");
    llm.enqueue(reply().text("summary done"));
    const z = await runHermes(["-z", "summarize @file:notes.txt please"], h);
    expect(z.code, z.stderr).toBe(0);
    expect(z.stdout).toBe("summary done\n");
    const sent = sentText();
    expect(sent.startsWith("summarize @file:notes.txt please")).toBe(true);
    expect(sent).toContain("alpha line");
    expect(sent).toContain("gamma line");

    llm.enqueue(reply().text("second"));
    const q = await runHermes(["-q", "only @file:notes.txt:2-2"], h);
    expect(q.code, q.stderr).toBe(0);
    expect(q.stderr).toMatch(/@ attached 1 reference \(about \d+ tokens\)/);
    expect(sentText()).toContain("beta line");
    expect(sentText()).not.toContain("alpha line");

    // The prompt given as words is a typed prompt too; an address is not a reference.
    llm.enqueue(reply().text("third"));
    const words = await runHermes(["chat", "mail", "me@file:notes.txt", "and", "read", "@file:notes.txt"], h);
    expect(words.code, words.stderr).toBe(0);
    expect(sentText()).toContain("mail me@file:notes.txt and read @file:notes.txt");
    expect(sentText()).toContain("gamma line");
  });

  it("keeps the REPL's guards: nothing outside the working directory, no secrets, size refused before sending", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    writeFileSync(join(h.home, ".env"), "OPENAI_API_KEY=sk-live-secret-value-123456\n");
    writeFileSync(join(h.cwd, "..", "outside.txt"), "outside-the-project\n");
    symlinkSync(join(h.home, ".env"), join(h.cwd, "innocent.txt"));

    llm.enqueue(reply().text("ok"));
    const run = await runHermes(
      ["-z", "read @file:../outside.txt and @file:innocent.txt and @folder:../home"],
      h,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe("ok\n");
    const sent = sentText();
    expect(sent).not.toContain("outside-the-project");
    expect(sent).not.toContain("sk-live-secret-value");
    expect(sent).not.toContain(".env");
    // Each refusal is said on stderr (even with -z) and told to the model.
    expect(run.stderr.match(/hermes: warning: /g)?.length).toBeGreaterThanOrEqual(3);

    // Together over half the model's window (2000 tokens; each file alone fits): refused as a
    // whole, no request made.
    const small = tempHome(
      fakeProviderConfig(llm.url).replace("model:\n", "model:\n  context_length: 2000\n"),
    );
    writeFileSync(join(small.cwd, "a.txt"), "word ".repeat(600));
    writeFileSync(join(small.cwd, "b.txt"), "word ".repeat(600));
    const before = llm.chatRequests.length;
    const big = await runHermes(["-z", "read @file:a.txt and @file:b.txt"], small);
    expect(big.code).toBe(2);
    expect(big.stderr).toContain("nothing was sent");
    expect(big.stdout).toBe("");
    expect(llm.chatRequests.length).toBe(before);
  });

  it("a prompt piped on stdin is data: its @file: stays text", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    writeFileSync(join(h.cwd, "private.txt"), "private-contents\n");
    llm.enqueue(reply().text("ok"));
    const piped = await runHermes([], { ...h, input: "forwarded mail says: @file:private.txt" });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).not.toContain("@ attached");
    expect(sentText()).toBe("forwarded mail says: @file:private.txt");
  });

  it("attaches a folder listing, the unstaged and staged diffs, and a fetched page", async () => {
    const page = createServer((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end("<html><body><h1>Release notes</h1><p>Version 7 ships the widget.</p></body></html>");
    });
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/notes`;
      // A loopback page is an internal address: fetched only because the config allows it.
      const h = tempHome(fakeProviderConfig(llm.url, "security:\n  allow_private_urls: true\n"));
      const git = (...args: string[]) =>
        execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: h.cwd });
      git("init", "-q");
      mkdirSync(join(h.cwd, "src"));
      writeFileSync(join(h.cwd, "src", "tracked.txt"), "first\n");
      git("add", "src/tracked.txt");
      git("commit", "-qm", "first");
      writeFileSync(join(h.cwd, "src", "tracked.txt"), "first\nunstaged-change\n");
      writeFileSync(join(h.cwd, "src", "staged.txt"), "staged-change\n");
      git("add", "src/staged.txt");

      llm.enqueue(reply().text("seen"));
      const run = await runHermes(["-q", `look at @folder:src @diff @staged @url:${url}`], h);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/@ attached 4 references/);
      const sent = sentText();
      expect(sent).toMatch(/tracked\.txt[\s\S]*staged\.txt|staged\.txt[\s\S]*tracked\.txt/);
      expect(sent).toMatch(/git diff \(\d+ tokens\)[\s\S]*\+unstaged-change/);
      expect(sent).toMatch(/git diff --staged \(\d+ tokens\)[\s\S]*\+staged-change/);
      expect(sent).toContain("Version 7 ships the widget.");
    } finally {
      await new Promise<void>((resolve) => page.close(() => resolve()));
    }
  });
});
