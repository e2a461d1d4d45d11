/** `hermes -q` on a terminal renders the answer's markdown; piped, it stays the model's text. */
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/agent/events.js";
import { createRenderer, type OutputMode } from "../../../src/cli/render.js";
import type { MarkdownMode } from "../../../src/cli/tui/markdown-stream.js";

async function render(mode: OutputMode, events: AgentEvent[], markdown: MarkdownMode, columns?: number) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  Object.assign(stdout, { isTTY: markdown !== "raw", columns });
  let out = "";
  stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const renderer = await createRenderer({
    mode,
    verbose: false,
    stdout,
    stderr,
    color: markdown === "ansi",
    markdown,
  });
  for (const event of events) renderer.handle(event);
  return out;
}

const usage = { inputTokens: 1, outputTokens: 1 };
const answer = "# Plan\n\n- **first** step\n- second `step`\n\n```sh\nls -la\n```\nDone.";
const turn = (chunks: string[]): AgentEvent[] => [
  { type: "turn_start", iteration: 1 },
  ...chunks.map((text): AgentEvent => ({ type: "text_delta", text })),
  { type: "turn_end", iteration: 1, finishReason: "stop" },
  { type: "done", reason: "completed", text: chunks.join(""), iterations: 1, usage },
];

describe("Renderer: markdown on a terminal", () => {
  it("renders headings, lists, emphasis and code on a terminal, however the text was split", async () => {
    const whole = await render("normal", turn([answer]), "plain");
    const split = await render("normal", turn(answer.match(/.{1,3}/gs) ?? []), "plain");
    expect(split).toBe(whole);
    expect(whole).toMatch(/Plan/);
    expect(whole).not.toContain("**first**");
    expect(whole).toMatch(/• first step/);
    expect(whole).toContain("ls -la");
    expect(whole.endsWith("Done.\n")).toBe(true);
  });

  it("colours with ansi, and wraps to the terminal's width", async () => {
    const long = `${"word ".repeat(40).trim()}`;
    const out = await render("normal", turn([long]), "ansi", 40);
    const rows = out
      .replace(/\x1b\[[0-9;]*m/g, "")
      .trimEnd()
      .split("\n");
    expect(rows.length).toBeGreaterThan(4);
    for (const r of rows) expect(r.length).toBeLessThanOrEqual(40);
    expect(await render("normal", turn(["**bold**"]), "ansi")).toContain("\x1b[1m");
  });

  it("-Q (quiet) renders too, and only the completed call's text", async () => {
    const out = await render("quiet", turn([answer]), "plain");
    expect(out).toMatch(/• first step/);
  });

  it("piped output and -z stay the model's markdown byte for byte", async () => {
    expect(await render("normal", turn([answer]), "raw")).toBe(`${answer}\n`);
    expect(await render("oneshot", turn([answer]), "plain")).toBe(`${answer}\n`);
  });
});
