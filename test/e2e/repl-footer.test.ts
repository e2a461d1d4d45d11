/**
 * The REPL's status line follows `display.runtime_footer.fields` (upstream's footer setting): the
 * fields named, in their order, with the session's cost priced through config.yaml's `pricing:`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { hasTmux, Terminal } from "../support/terminal.js";

const llm = useFakeLlm();
const terminals: Terminal[] = [];
afterEach(() => {
  for (const t of terminals.splice(0)) t.kill();
});

describe.skipIf(!hasTmux)("display.runtime_footer.fields in the REPL", () => {
  it("shows only the configured fields, in their order, with the priced cost", async () => {
    const extra =
      "display:\n  runtime_footer:\n    fields: [cost, model, tokens]\n" +
      "pricing:\n  fake-model:\n    input: 3\n    output: 15\n";
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url, extra));
    llm.respondWith((request) =>
      ((request.body as { tools?: unknown[] }).tools ?? []).length === 0 ? reply().text("Footer") : undefined,
    );
    llm.enqueue(reply().text("Priced.").usage({ prompt: 100_000, completion: 10_000 }));
    const term = Terminal.start({ home, cwd, env: { NO_COLOR: "1" } });
    terminals.push(term);
    await term.waitFor("Ctrl+D to exit");
    term.type("what does this cost");
    term.keys("Enter");
    await term.waitFor("Priced.");
    // 100k input at $3/M plus 10k output at $15/M: $0.45, then the model and the tokens; no cwd.
    const screen = await term.waitFor(/\$0\.45 · fake-model · 110k tokens/);
    const line = screen.split("\n").find((l) => l.includes(" · fake-model · ")) ?? "";
    expect(line.trim()).toMatch(/^\$0\.45 · fake-model · 110k tokens$/);
    expect(line).not.toContain(cwd);
  });
});
