import { describe, expect, it } from "vitest";
import { renderTranscript } from "../../../../src/agent/review/prompt.js";
import {
  buildMemoryContextBlock,
  withMemoryContext,
} from "../../../../src/knowledge/memory/providers/context-block.js";

describe("renderTranscript", () => {
  it("shows the reviewer what the user said, without a memory provider's recall", () => {
    const recalled = buildMemoryContextBlock("The user prefers tabs over spaces.");
    const transcript = renderTranscript([
      { role: "user", content: withMemoryContext("Set up the linter for this repo.", recalled) },
      { role: "assistant", content: "Done: biome with tabs." },
    ]);
    expect(transcript).toContain("[user] Set up the linter for this repo.");
    expect(transcript).toContain("[assistant] Done: biome with tabs.");
    expect(transcript).not.toContain("prefers tabs over spaces");
  });
});
