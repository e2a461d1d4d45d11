import { describe, expect, it } from "vitest";
import { cutAtSentence, textForSpeech } from "../../../../src/cli/voice/speech-text.js";

describe("text for speech", () => {
  it("drops code blocks, inline code and markdown marks but keeps the prose", () => {
    const answer = [
      "# Result",
      "",
      "Run **this** command to *list* files:",
      "",
      "```bash",
      "ls -la /etc && rm -rf /tmp/x",
      "```",
      "",
      "Then call `grep` on the output.",
    ].join("\n");
    const spoken = textForSpeech(answer);
    expect(spoken).toBe("Result. Run this command to list files: Then call on the output.");
    expect(spoken).not.toMatch(/ls -la|rm -rf|grep|```|\*|#/);
  });

  it("reads a link's words, not its address, and drops images, bare URLs and HTML", () => {
    const spoken = textForSpeech(
      "See [the docs](https://example.com/docs) and ![chart](c.png) at https://x.io/a <b>now</b>.",
    );
    expect(spoken).toBe("See the docs and at now.");
    expect(spoken).not.toMatch(/https?:|example\.com|png|<b>/);
  });

  it("reads list items and tables as sentences, without bullets or rules", () => {
    const spoken = textForSpeech("- first item\n- second item\n\n| a | b |\n|---|---|\n| 1 | 2 |");
    expect(spoken).not.toMatch(/^-|\|---/);
    expect(spoken).toContain("first item");
    expect(spoken).toContain("second item");
  });

  it("says nothing for an answer that is only code", () => {
    expect(textForSpeech("```js\nconsole.log(1)\n```")).toBe("");
  });

  it("drops an unterminated code block (a cut-off answer) to the end", () => {
    expect(textForSpeech("Here it is:\n\n```py\nimport os\nos.system('x')")).toBe("Here it is:");
  });

  it("cuts a long answer at the last sentence end that fits", () => {
    const sentence = "This sentence has exactly fifty characters in it. ";
    const spoken = textForSpeech(sentence.repeat(40), 240);
    expect(spoken.length).toBeLessThanOrEqual(240);
    expect(spoken.endsWith("in it.")).toBe(true);
    expect(spoken).toBe(sentence.repeat(4).trim());
  });

  it("cuts at a word with an ellipsis when no sentence ends early enough", () => {
    const cut = cutAtSentence(`${"word ".repeat(100)}end.`, 52);
    expect(cut.endsWith("word…")).toBe(true);
    expect(cut.length).toBeLessThanOrEqual(53);
  });
});
