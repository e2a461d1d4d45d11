import iconv from "iconv-lite";
import { describe, expect, it } from "vitest";
import { charsetFromContentType, decodeText, detectCharset } from "../../../../src/tools/web/charset.js";

describe("detectCharset", () => {
  it.each([
    ["header charset", Buffer.from("<p>hi</p>"), "text/html; charset=Shift_JIS", "shift_jis"],
    ["quoted header charset", Buffer.from("x"), 'text/html; charset="windows-1251"', "windows-1251"],
    ["Latin-1 label read as windows-1252", Buffer.from("x"), "text/html; charset=ISO-8859-1", "windows-1252"],
    ["meta charset", Buffer.from('<meta charset="euc-jp"><p>x</p>'), "text/html", "euc-jp"],
    [
      "http-equiv meta",
      Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'),
      "text/html",
      "koi8-r",
    ],
    ["XML declaration", Buffer.from('<?xml version="1.0" encoding="ISO-8859-15"?><rss/>'), "", "iso-8859-15"],
    ["BOM beats the header", Buffer.from([0xff, 0xfe, 0x41, 0x00]), "text/plain; charset=utf-8", "utf-16le"],
    ["undeclared valid UTF-8", Buffer.from("caf\u00e9"), "text/html", "utf-8"],
    ["undeclared invalid UTF-8", Buffer.from([0x63, 0x61, 0x66, 0xe9]), "text/html", "windows-1252"],
    ["unknown label ignored", Buffer.from("plain"), "text/html; charset=x-unheard-of", "utf-8"],
  ])("%s", (_name, body, contentType, expected) => {
    expect(detectCharset(body, contentType)).toBe(expected);
  });

  it("reads the charset parameter only", () => {
    expect(charsetFromContentType("text/html")).toBeUndefined();
    expect(charsetFromContentType(undefined)).toBeUndefined();
  });
});

describe("decodeText", () => {
  it("decodes windows-1252 punctuation that Latin-1 would lose", () => {
    const body = Buffer.from([0x93, 0x80, 0x35, 0x94, 0x20, 0x97, 0x20, 0x63, 0x61, 0x66, 0xe9]);
    expect(decodeText(body, "text/plain; charset=iso-8859-1")).toBe("\u201c\u20ac5\u201d \u2014 caf\u00e9");
  });

  it("decodes UTF-16 with a BOM and strips the BOM", () => {
    const body = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("owl", "utf16le")]);
    expect(decodeText(body, "text/plain")).toBe("owl");
  });

  it("ignores a meta tag when asked to (plain text that mentions charset)", () => {
    const body = iconv.encode('<meta charset="shift_jis"> caf\u00e9', "utf-8");
    expect(decodeText(body, "text/plain", false)).toBe('<meta charset="shift_jis"> caf\u00e9');
  });
});
