import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { setConfigValue } from "../../../src/config/write.js";
import { useTempHome, writeConfig } from "./helpers.js";

// Exact expected files for `hermes config set`: each edit touches only what it must.
const CASES: Array<[string, string, string, string, string]> = [
  [
    "adds a section to a file without a final newline",
    "agent:\n  max_turns: 5",
    "display.compact",
    "true",
    "agent:\n  max_turns: 5\ndisplay:\n  compact: true\n",
  ],
  [
    "adds a key after a nested mapping, before trailing comments",
    "agent:\n  nested:\n    a: 1\n# end\n",
    "agent.max_turns",
    "3",
    "agent:\n  nested:\n    a: 1\n  max_turns: 3\n# end\n",
  ],
  ["replaces a flush block list", "toolsets:\n- a\n- b\nx: 1\n", "toolsets", "c", "toolsets:\n- c\nx: 1\n"],
  [
    "replaces a nested block list",
    "agent:\n  disabled_toolsets:\n  - a\n",
    "agent.disabled_toolsets",
    "b,c",
    "agent:\n  disabled_toolsets:\n  - b\n  - c\n",
  ],
  [
    "keeps single quotes",
    "model:\n  default: 'a/b'  # x\n",
    "model.default",
    "c/d",
    "model:\n  default: 'c/d'  # x\n",
  ],
  [
    "escapes inside double quotes",
    'display:\n  personality: "x"\n',
    "display.personality",
    'say "hi"',
    'display:\n  personality: "say \\"hi\\""\n',
  ],
  [
    "adds to a flow mapping",
    "display: {compact: false}\n",
    "display.show_cost",
    "true",
    "display: { compact: false, show_cost: true }\n",
  ],
  ["replaces an unknown scalar with a mapping", "extra: 1\n", "extra", '{"a": 1}', "extra:\n  a: 1\n"],
  [
    "keeps CRLF line endings",
    "agent:\r\n  max_turns: 5 # c\r\n",
    "agent.max_turns",
    "6",
    "agent:\r\n  max_turns: 6 # c\r\n",
  ],
  [
    "adds with CRLF line endings",
    "agent:\r\n  max_turns: 5\r\n",
    "agent.clarify_timeout",
    "9",
    "agent:\r\n  max_turns: 5\r\n  clarify_timeout: 9\r\n",
  ],
  [
    "appends to a comment-only file",
    "# just notes\n",
    "agent.max_turns",
    "4",
    "# just notes\nagent:\n  max_turns: 4\n",
  ],
  [
    "fills a blank section",
    "agent: # later\nx: 1\n",
    "agent.max_turns",
    "4",
    "agent: # later\n  max_turns: 4\nx: 1\n",
  ],
];

describe("config set edits", () => {
  const tempHome = useTempHome();

  it.each(CASES)("%s", (_name, before, key, value, after) => {
    const home = tempHome();
    writeConfig(home, before);
    setConfigValue(home, key, value);
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(after);
  });
});
