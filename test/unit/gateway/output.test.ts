import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chunkMarkdown, extractMedia, isSilent } from "../../../src/gateway/messaging/output.js";
import { resetPolicyFrom, resetReason } from "../../../src/state/gateway/session-index.js";

describe("isSilent", () => {
  it.each([
    ["[SILENT]", true],
    ["  silent \n", true],
    ["NO_REPLY", true],
    ["[SILENT] nothing new today", true],
    ["Silently, the job finished.", false],
    ["", false],
  ])("%j → %s", (text, expected) => {
    expect(isSilent(text)).toBe(expected);
  });
});

describe("extractMedia", () => {
  const dir = mkdtempSync(join(tmpdir(), "hermes-media-"));
  const photo = join(dir, "cat.jpg");
  const voice = join(dir, "note.ogg");
  const env = join(dir, ".env");
  writeFileSync(photo, "jpg");
  writeFileSync(voice, "ogg");
  writeFileSync(env, "SECRET=1");

  it("takes MEDIA: lines and bare media paths out of the text", () => {
    const out = extractMedia(`Here you go.\nMEDIA: ${photo}\n${voice}\nBye.`);
    expect(out.text).toBe("Here you go.\nBye.");
    expect(out.media).toEqual([
      { kind: "photo", path: photo },
      { kind: "audio", path: voice },
    ]);
    expect(out.problems).toEqual([]);
  });

  it("honours [[as_document]] and [[audio_as_voice]]", () => {
    expect(extractMedia(`MEDIA:${photo}\n[[as_document]]`).media).toEqual([
      { kind: "document", path: photo },
    ]);
    expect(extractMedia(`[[audio_as_voice]]\nMEDIA: ${voice}`).media).toEqual([
      { kind: "voice", path: voice },
    ]);
  });

  it("reports missing files and refuses secret files; leaves paths inside code blocks and prose alone", () => {
    const out = extractMedia(
      `MEDIA: /no/such.png\nMEDIA: ${env}\n\`\`\`\n${photo}\n\`\`\`\nSee ${photo} above.`,
    );
    expect(out.media).toEqual([]);
    expect(out.problems).toEqual(["/no/such.png: no such file", `${env}: refused (a secret or key file)`]);
    expect(out.text).toContain(photo);
  });
});

describe("chunkMarkdown", () => {
  it("leaves short text whole and splits long text at paragraph breaks", () => {
    expect(chunkMarkdown("short", 100)).toEqual(["short"]);
    const paragraphs = Array.from({ length: 6 }, (_, i) => `Paragraph ${i} ${"word ".repeat(12).trim()}.`);
    const chunks = chunkMarkdown(paragraphs.join("\n\n"), 160);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(160);
    expect(chunks.join("\n\n")).toBe(paragraphs.join("\n\n"));
  });

  it("closes and reopens a code block cut in two, with its language", () => {
    const body = Array.from({ length: 20 }, (_, i) => `print(${i})`).join("\n");
    const chunks = chunkMarkdown(`\`\`\`python\n${body}\n\`\`\``, 80);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(80);
      expect((chunk.match(/```/g) ?? []).length).toBe(2);
    }
    expect(chunks[1]?.startsWith("```python\n")).toBe(true);
  });

  it("hard-cuts a single enormous word", () => {
    const chunks = chunkMarkdown("x".repeat(1000), 100);
    expect(chunks.every((c) => c.length <= 100)).toBe(true);
    expect(chunks.join("")).toBe("x".repeat(1000));
  });
});

describe("reset policy", () => {
  it("idle, daily, both and none", () => {
    const at = (s: string) => new Date(s);
    const both = resetPolicyFrom({ mode: "both", idle_minutes: 120, at_hour: 4 });
    expect(resetReason(at("2026-11-20T10:00"), at("2026-11-20T11:00"), both)).toBeNull();
    expect(resetReason(at("2026-11-20T10:00"), at("2026-11-20T12:30"), both)).toBe("idle");
    expect(resetReason(at("2026-11-20T03:30"), at("2026-11-20T04:10"), both)).toBe("daily");
    expect(
      resetReason(at("2026-11-20T03:30"), at("2026-11-20T04:10"), resetPolicyFrom({ mode: "none" })),
    ).toBeNull();
    expect(resetPolicyFrom({ mode: "weird", idle_minutes: -1 })).toEqual({
      mode: "both",
      idleMinutes: 1440,
      atHour: 4,
    });
    expect(
      resetPolicyFrom({ mode: "idle", platforms: { telegram: { mode: "none" } } }, "telegram").mode,
    ).toBe("none");
  });
});
