import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSessions, browserTools } from "../../../../src/tools/browser/index.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import type { ExecuteCodeResult } from "../../../../src/tools/sandbox/execute-code.js";
import { executeCodeTool } from "../../../../src/tools/sandbox/index.js";
import { makeToolContext } from "../../../support/tool-context.js";
import { browserConfig, CHROMIUM, NO_CHROMIUM_REASON, type Site, startSite } from "./helpers.js";

/** pyenv shims need their root to find the interpreter; harmless elsewhere. */
function pyenvVars(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("PYENV") && value !== undefined) out[name] = value;
  }
  return out;
}

describe.skipIf(!CHROMIUM)(`execute_code driving the browser (${CHROMIUM ?? NO_CHROMIUM_REASON})`, () => {
  let site: Site;

  beforeAll(async () => {
    site = await startSite();
  });

  afterAll(async () => {
    await site?.close();
  });

  it("runs navigate, snapshot, type and click from a Python script in the task's browser", async () => {
    const registry = new ToolRegistry();
    registry.registerAll([...browserTools, executeCodeTool]);
    const ctx = makeToolContext({
      config: browserConfig(),
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...pyenvVars() },
      enabledTools: registry.names(),
    });
    ctx.callTool = (name, args) => registry.execute(name, args, ctx);
    try {
      const script = [
        "import re",
        "from hermes_tools import browser_navigate, browser_snapshot, browser_type, browser_click",
        `page = browser_navigate(${JSON.stringify(`${site.url}/form`)})`,
        "snap = browser_snapshot()['snapshot']",
        "def ref(label):",
        "    return '@' + re.search(re.escape(label) + r'[^\\n]*\\[@(e\\d+)\\]', snap).group(1)",
        "browser_type(ref('textbox \"Name\"'), 'Script Kiddo')",
        "browser_type(ref('textbox \"Email\"'), 'kiddo@example.org')",
        "done = browser_click(ref('button \"Create account\"'))",
        "print(page['title'], '->', done['title'])",
        "print('\\n'.join(line.strip() for line in done['snapshot'].splitlines() if 'listitem' in line))",
      ].join("\n");
      const result = (await executeCodeTool.handler({ code: script }, ctx)) as ExecuteCodeResult;
      expect(result.errors).toBeUndefined();
      expect(result).toMatchObject({ status: "success", tool_calls_made: 5 });
      expect(result.output).toContain("Sign up -> Welcome");
      expect(result.output).toContain("name=Script Kiddo");
      expect(result.output).toContain("email=kiddo@example.org");

      // The script used the task's browser: the agent sees the page it left.
      const session = await browserSessions(ctx.runtime).peek(ctx.taskId);
      expect(session?.page.url()).toBe(`${site.url}/submit`);
      const snapshot = await registry.execute("browser_snapshot", {}, ctx);
      expect(JSON.parse(snapshot.content)).toMatchObject({ title: "Welcome" });
    } finally {
      await ctx.runtime.dispose();
    }
  });
});
