/**
 * Programmatic tool calling through the built CLI: the model sends one `execute_code` call whose
 * script calls tools over the sandbox socket; only the script's printed output reaches the model,
 * and the nested calls are shown on the terminal but never stored as conversation messages.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { openSessionStore } from "../../src/state/sqlite-store.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm();
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  llm.chatRequests.length = 0;
});

const SCRIPT = [
  "import re",
  "from hermes_tools import read_file, write_file",
  "total = 0",
  "for name in ['a.txt', 'b.txt', 'c.txt']:",
  "    text = read_file(name)",
  "    first = str(text).strip().splitlines()[0]",
  "    total += int(re.split(r'[|\\t]', first)[-1].strip())",
  "write_file('sum.txt', str(total))",
  "print(f'sum={total}')",
].join("\n");

describe("execute_code from the CLI", () => {
  it("runs a script that calls tools; the model sees only its output", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    for (const [name, n] of [
      ["a.txt", 1],
      ["b.txt", 20],
      ["c.txt", 300],
    ] as const)
      writeFileSync(join(h.cwd, name), `${n}\n`);
    llm.enqueue(
      reply().toolCall("execute_code", { code: SCRIPT }, "call_exec_1"),
      reply().text("The sum is 321."),
    );
    const result = await runHermes(["-q", "Add up the numbers in a, b and c", "--toolsets", "hermes-cli"], {
      ...h,
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("The sum is 321.");

    // The second request carries the script's stdout as the one tool result.
    const second = llm.chatRequests[1]?.body as { messages: Array<{ role: string; content: string }> };
    const tools = second.messages.filter((m) => m.role === "tool");
    expect(tools).toHaveLength(1);
    const outcome = JSON.parse(tools[0]?.content ?? "{}") as Record<string, unknown>;
    expect(outcome["status"], JSON.stringify(outcome)).toBe("success");
    expect(outcome["output"]).toBe("sum=321");
    expect(outcome["tool_calls_made"]).toBe(4);
    // The script's work landed on disk.
    const { readFileSync } = await import("node:fs");
    expect(readFileSync(join(h.cwd, "sum.txt"), "utf8")).toBe("321");

    const store = openSessionStore(join(h.home, "state.db"), { readonly: true });
    try {
      const [session] = store.listSessions();
      const roles = store.conversation(session?.id ?? "").map((m) => m.role);
      expect(roles).toEqual(["user", "assistant", "tool", "assistant"]);
    } finally {
      store.close();
    }
  }, 70_000);
});
