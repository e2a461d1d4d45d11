/** Live command output passes the redactor in whole lines, whatever the chunking. */
import { describe, expect, it } from "vitest";
import { liveOutput } from "../../../src/agent/tool-context.js";
import { processRedactor } from "../../../src/util/redact.js";

const KEY = "sk-proj-Abc123DEF456ghi789JKL012mno345PQR678";

function feed(chunks: string[]) {
  const redactor = processRedactor();
  const shown: string[] = [];
  const push = liveOutput(
    (t) => redactor.redact(t),
    (t) => shown.push(t),
  );
  for (const c of chunks) push(c);
  return shown;
}

describe("live tool output", () => {
  it("emits whole lines only, \\n or \\r ended, and holds the unfinished rest", () => {
    expect(feed(["one\ntw", "o\nthr"])).toEqual(["one\n", "two\n"]);
    expect(feed(["10%\r20%\r", "30"])).toEqual(["10%\r20%\r"]);
  });

  it("a key split across chunks is still redacted (every split point)", () => {
    const line = `export OPENAI_API_KEY=${KEY}\n`;
    for (let at = 1; at < line.length; at++) {
      const shown = feed([line.slice(0, at), line.slice(at)]).join("");
      expect(shown).not.toContain(KEY.slice(8));
      expect(shown).toContain("OPENAI_API_KEY");
    }
  });

  it("a private key printed line by line is held until its END line, then redacted whole", () => {
    const body = [
      "-----BEGIN OPENSSH PRIVATE KEY-----",
      "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ",
      "QyNTUxOQAAACDdXKqEXAMPLEONLYxxxxxxxxxxxxxxxx",
      "-----END OPENSSH PRIVATE KEY-----",
      "after",
    ];
    const shown = feed(body.map((l) => `${l}\n`));
    const text = shown.join("");
    expect(text).not.toContain("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ");
    expect(text).not.toContain("QyNTUxOQAAACDdXKqEXAMPLEONLY");
    expect(text).toContain("after");
  });

  it("a line that never ends is passed on in bounded pieces", () => {
    const shown = feed(Array.from({ length: 5 }, () => "x".repeat(3000)));
    expect(shown.length).toBeGreaterThan(0);
    for (const s of shown) expect(s.length).toBeLessThanOrEqual(8000);
  });
});
