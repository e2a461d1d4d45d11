/**
 * Background work reporting back: the built `hermes` REPL on a pseudo-terminal, a fake LLM that
 * starts a background command with `notify_on_complete`, and the idle prompt waking by itself
 * when the command ends, so the model's next turn reads the notice.
 */
import { afterEach, describe, expect, it } from "vitest";
import { NOTICES_HEADER } from "../../src/agent/notices.js";
import { fakeProviderConfig, type RunningHermes, spawnHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { waitFor } from "../unit/tools/terminal/helpers.js";

const llm = useFakeLlm();
const running: RunningHermes[] = [];

afterEach(async () => {
  llm.respondWith(undefined);
  for (const run of running.splice(0)) {
    if (run.child.exitCode === null) run.child.kill("SIGKILL");
    run.child.stdin.end();
    await run.exited;
  }
});

type Wire = { role: string; content: string | null };
const userMessages = (index: number): string[] =>
  ((llm.chatRequests[index]?.body as { messages?: Wire[] } | undefined)?.messages ?? [])
    .filter((m) => m.role === "user")
    .map((m) => String(m.content));

describe("an idle REPL wakes for a background process that ends", () => {
  it("prints what woke it and runs a turn whose message is the notice", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(
      reply().toolCall("terminal", {
        command: "sleep 1; echo build-finished-ok",
        background: true,
        notify_on_complete: true,
      }),
      reply().text("Started the build; I will hear when it ends."),
    );
    // Side requests (the session title) come without tools; the woken turn is told apart by its message.
    llm.respondWith((request) => {
      const body = request.body as { tools?: unknown[]; messages: Wire[] };
      if (!body.tools) return reply().text("Build session");
      const last = body.messages.filter((m) => m.role === "user").at(-1);
      return String(last?.content).startsWith(NOTICES_HEADER)
        ? reply().text("The build finished fine.")
        : undefined;
    });
    const run = spawnHermes([], { ...h, tty: true });
    running.push(run);
    await waitFor(
      () => run.output().stdout.includes("❯") || run.child.exitCode !== null,
      20_000,
      "the prompt",
    );
    run.child.stdin.write("start the build\r");
    await waitFor(() => run.output().stdout.includes("Started the build"), 20_000, "the first answer");
    // No key is pressed: the process ending alone starts the next turn.
    await waitFor(() => run.output().stdout.includes("The build finished fine."), 30_000, "the woken turn");
    expect(run.output().stdout).toMatch(/⏰ process proc_[0-9a-f]+: Background process proc_/);
    const turns = llm.chatRequests.filter((r) => (r.body as { tools?: unknown[] }).tools);
    expect(turns).toHaveLength(3);
    const woken = userMessages(llm.chatRequests.indexOf(turns[2]!));
    expect(woken.at(-1)?.startsWith(NOTICES_HEADER)).toBe(true);
    expect(woken.at(-1)).toContain("exited with code 0");
    expect(woken.at(-1)).toContain("build-finished-ok");
    run.child.stdin.write("/quit\r");
    const ended = await run.exited;
    expect(ended.code).toBe(0);
  }, 90_000);
});
