import { describe, expect, it } from "vitest";
import { decodeText, encodeText } from "../../../src/util/text-encoding.js";

const b = (...bytes: number[]) => Uint8Array.from(bytes);
const ascii = (s: string) => [...Buffer.from(s, "latin1")];

describe("decodeText", () => {
  it.each([
    ["plain UTF-8", Buffer.from("héllo 日本\n", "utf8"), "utf-8", "héllo 日本\n"],
    ["UTF-8 with BOM", Buffer.from("\uFEFFhé\n", "utf8"), "utf-8-bom", "hé\n"],
    [
      "UTF-16 LE with BOM",
      Buffer.concat([b(0xff, 0xfe), Buffer.from("hé 🎉\r\n", "utf16le")]),
      "utf-16le",
      "hé 🎉\r\n",
    ],
    [
      "UTF-16 BE with BOM",
      Buffer.concat([b(0xfe, 0xff), Buffer.from("hé\n", "utf16le").swap16()]),
      "utf-16be",
      "hé\n",
    ],
    ["Latin-1", b(...ascii("caf"), 0xe9, 0x0a), "latin1", "café\n"],
    ["Windows-1252 (euro, curly quotes)", b(0x80, 0x20, 0x93, 0x61, 0x94, 0x0a), "windows-1252", "€ “a”\n"],
    ["empty", b(), "utf-8", ""],
  ])("%s", (_name, bytes, encoding, text) => {
    expect(decodeText(bytes)).toEqual({ ok: true, encoding, text });
  });

  it("a byte Windows-1252 leaves undefined makes the file Latin-1", () => {
    const r = decodeText(
      b(...ascii("a "), 0x80, 0x81, ...ascii(" long enough text to stay under the control share")),
    );
    expect(r).toMatchObject({ ok: true, encoding: "latin1" });
  });

  it.each([
    [
      "a PNG header",
      b(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52),
    ],
    ["UTF-16 without a BOM", Buffer.from("hello world\n", "utf16le")],
    ["control-character soup", b(1, 2, 3, 4, 5, 6, 7, 8, 0x61, 0x62)],
    ["a BOM over an odd byte count", b(0xff, 0xfe, 0x61)],
    ["a UTF-16 BOM over lone surrogates", b(0xff, 0xfe, 0x00, 0xd8, 0x61, 0x00)],
  ])("refuses %s as binary", (_name, bytes) => {
    expect(decodeText(bytes)).toMatchObject({ ok: false, reason: "binary" });
  });

  it("refuses UTF-8 mixed with stray Latin-1 bytes instead of guessing", () => {
    const bytes = Buffer.concat([Buffer.from("naïve text, mostly UTF-8 ", "utf8"), b(0xe9, 0x0a)]);
    expect(decodeText(bytes)).toMatchObject({ ok: false, reason: "mixed" });
    expect(decodeText(Buffer.concat([b(0xef, 0xbb, 0xbf), b(0xe9, 0x0a)]))).toMatchObject({
      reason: "mixed",
    });
  });
});

describe("encodeText", () => {
  it("round-trips every byte of a single-byte file exactly", () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    for (const enc of ["latin1", "windows-1252"] as const) {
      const text =
        enc === "latin1"
          ? Buffer.from(all).toString("latin1")
          : [...all]
              .map((x) =>
                x >= 0x80 && x <= 0x9f
                  ? "€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008DŽ\u008F\u0090‘’“”•–—˜™š›œ\u009DžŸ"[x - 0x80]
                  : String.fromCharCode(x),
              )
              .join("");
      expect([...encodeText(text, enc)]).toEqual([...all]);
    }
  });

  it("writes the BOM back for UTF-8 BOM and UTF-16 files", () => {
    for (const bytes of [
      Buffer.from("\uFEFFx\r\ny", "utf8"),
      Buffer.concat([b(0xff, 0xfe), Buffer.from("x🎉\r\n", "utf16le")]),
      Buffer.concat([b(0xfe, 0xff), Buffer.from("x🎉\r\n", "utf16le").swap16()]),
    ]) {
      const r = decodeText(bytes);
      if (!r.ok) throw new Error("expected text");
      expect(encodeText(r.text, r.encoding).equals(bytes)).toBe(true);
    }
  });

  it("refuses a character Latin-1 cannot hold, naming it and its line, never a '?'", () => {
    expect(() => encodeText("a\nprice: 5 €\n", "latin1")).toThrow(
      /"€" \(U\+20AC\) on line 2.*Nothing was written/,
    );
    expect(encodeText("5 €", "windows-1252")).toEqual(Buffer.from([0x35, 0x20, 0x80]));
    expect(() => encodeText("日本", "windows-1252")).toThrow(/U\+65E5/);
    expect(() => encodeText("🎉", "latin1")).toThrow(/U\+1F389/);
  });
});
