/**
 * Non-UTF-8 text files and subdirectory context hints through the built CLI: a scripted model reads
 * a Latin-1 file in a subdirectory that has its own AGENTS.md, patches it, overwrites a UTF-16 file,
 * tries a character Latin-1 cannot hold, reads a PNG and patches a Windows-1252 file, in one
 * one-shot run. The files keep their encodings byte for byte, the refusals are clear, and the
 * subdirectory's AGENTS.md is announced once in a tool result while the system prompt stays the
 * same on every request.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});

type ChatBody = { messages: Array<{ role: string; content: string | null }> };
const utf16le = (s: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(s, "utf16le")]);

describe("text files in other encodings, and context hints, through the built CLI", () => {
  it("reads and edits Latin-1, Windows-1252 and UTF-16 in place, refuses what cannot be kept, and announces legacy/AGENTS.md once", async () => {
    const { home, cwd } = tempHome();
    writeFileSync(join(home, "config.yaml"), fakeProviderConfig(llm.url));
    mkdirSync(join(cwd, "legacy"));
    writeFileSync(join(cwd, "AGENTS.md"), "# Top-level rules\n");
    writeFileSync(
      join(cwd, "legacy", "AGENTS.md"),
      "# Legacy module\nFiles here are Latin-1; keep them so.\n",
    );
    writeFileSync(join(cwd, "legacy", "prix.txt"), Buffer.from("Prix: 5 EUR\r\nCafé crème\r\n", "latin1"));
    writeFileSync(join(cwd, "legacy", "notes.txt"), utf16le("alt\r\n"));
    // Windows-1252: the euro sign and curly quotes sit in 0x80-0x9F, where Latin-1 has controls.
    const cp1252 = (...bytes: number[]) => Buffer.from(bytes);
    writeFileSync(
      join(cwd, "legacy", "quote.txt"),
      Buffer.concat([
        cp1252(0x93),
        Buffer.from("Price"),
        cp1252(0x94),
        Buffer.from(": 9 "),
        cp1252(0x80, 0x0a),
      ]),
    );
    const png = Buffer.from("89504e470d0a1a0a0000000d4948445200000001000000010806000000", "hex");
    writeFileSync(join(cwd, "pixel.png"), png);

    llm.enqueue(
      reply().toolCall("read_file", { path: "legacy/prix.txt" }),
      reply().toolCall("patch", {
        path: "legacy/prix.txt",
        old_string: "Café crème",
        new_string: "Crème brûlée",
      }),
      reply().toolCall("patch", { path: "legacy/prix.txt", old_string: "5 EUR", new_string: "5 €" }),
      reply().toolCall("write_file", { path: "legacy/notes.txt", content: "neu: grüße ✓\r\n" }),
      reply().toolCall("read_file", { path: "pixel.png" }),
      reply().toolCall("read_file", { path: "legacy/quote.txt" }),
      reply().toolCall("patch", { path: "legacy/quote.txt", old_string: "9 €", new_string: "12 €" }),
      reply().text("Done."),
    );
    const result = await runHermes(["-z", "tidy the legacy files"], { home, cwd });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("Done.\n");

    expect(readFileSync(join(cwd, "legacy", "prix.txt"))).toEqual(
      Buffer.from("Prix: 5 EUR\r\nCrème brûlée\r\n", "latin1"),
    );
    expect(readFileSync(join(cwd, "legacy", "notes.txt"))).toEqual(utf16le("neu: grüße ✓\r\n"));
    expect(readFileSync(join(cwd, "pixel.png"))).toEqual(png);

    const requests = llm.chatRequests.map((r) => r.body as ChatBody);
    const last = requests.at(-1) as ChatBody;
    const results = last.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
    expect(results).toHaveLength(7);
    expect(results[0]).toContain("ISO-8859-1 (Latin-1) file, shown decoded");
    expect(results[0]).toContain("     2|Café crème");
    expect(results[0]).toMatch(
      /\[Context file for legacy\/: legacy\/AGENTS\.md \(\d+ bytes\).*# Legacy module\nFiles here are Latin-1/s,
    );
    expect(results[1]).toContain("Patched legacy/prix.txt");
    expect(results.slice(1).join("\n")).not.toContain("Context file for");
    expect(results[2]).toMatch(/Cannot write legacy\/prix\.txt: .*ISO-8859-1.*€.*\(U\+20AC\) on line 1/);
    expect(results[3]).toContain("kept UTF-16 LE with BOM");
    expect(results[4]).toMatch(/binary file \(\.png\)/);
    expect(results[5]).toMatch(/Windows-1252/);
    expect(results[5]).toContain("“Price”: 9 €");
    expect(results[6]).toContain("Patched legacy/quote.txt");
    expect(readFileSync(join(cwd, "legacy", "quote.txt"))).toEqual(
      Buffer.concat([
        Buffer.from([0x93]),
        Buffer.from("Price"),
        Buffer.from([0x94]),
        Buffer.from(": 12 "),
        Buffer.from([0x80, 0x0a]),
      ]),
    );

    // The hint never touched the system prompt: same on every request, without the subdirectory's file.
    const systems = requests.map((b) => b.messages.find((m) => m.role === "system")?.content);
    expect(new Set(systems).size).toBe(1);
    expect(systems[0]).toContain("Top-level rules");
    expect(systems[0]).not.toContain("Legacy module");
  }, 60_000);
});
