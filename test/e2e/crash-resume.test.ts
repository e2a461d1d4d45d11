/**
 * `kill -9` of the built `hermes` at the worst moments — while a tool runs, while an answer
 * streams, while a compression summary is being written — then `hermes -c` against an
 * Anthropic-wire fake that rejects unpaired tool_use/tool_result blocks with HTTP 400, as the real
 * API does. The continued session must get a normal answer and exit 0.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { INTERRUPTED_TOOL_RESULT } from "../../src/ai/history-repair.js";
import { openSqliteStore } from "../../src/state/sqlite-store.js";
import { runHermes, spawnHermes, tempHome } from "../support/cli.js";
import { type FakeLlm, hang, reply, stallMidStream, startFakeLlm } from "../support/fake-llm.js";
import { isRunning, waitFor } from "../unit/tools/terminal/helpers.js";

let llm: FakeLlm;
beforeAll(async () => {
  llm = await startFakeLlm({ strictToolPairs: true });
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.chatRequests.length = 0;
});

type Block = { type: string; text?: string; content?: unknown; tool_use_id?: string };
type Wire = { role: string; content: string | Block[] };
const sent = (index: number): Wire[] => (llm.chatRequests[index]!.body as { messages: Wire[] }).messages;

function home(extra = ""): { home: string; cwd: string } {
  return tempHome(
    `model:\n  provider: custom\n  base_url: ${llm.url}\n  default: claude-fake\n  api_mode: anthropic_messages\n${extra}agent:\n  api_max_retries: 0\n`,
  );
}

function stored(h: { home: string }) {
  const store = openSqliteStore(join(h.home, "state.db"), { readonly: true });
  try {
    return store.listSessions().map((s) => ({ session: s, messages: store.conversation(s.id) }));
  } finally {
    store.close();
  }
}

/** Runs hermes until `ready` holds, then `kill -9`s it (no handler, no cleanup: a crash). */
async function killWhen(
  args: string[],
  h: { home: string; cwd: string; tty?: boolean },
  ready: (out: { stdout: string; stderr: string }) => boolean,
  what: string,
): Promise<void> {
  const run = spawnHermes(args, h);
  let killed = false;
  try {
    await waitFor(() => ready(run.output()) || run.child.exitCode !== null, 20_000, what);
    expect(run.child.exitCode, `hermes ended before ${what}: ${JSON.stringify(run.output())}`).toBeNull();
    const pid = await waitFor(() => run.hermesPid(), 5_000, "the hermes pid");
    process.kill(pid, "SIGKILL");
    killed = true;
    await waitFor(() => !isRunning(pid), 10_000, "hermes to die");
  } finally {
    if (!killed) run.child.kill("SIGKILL");
    run.child.stdin.end();
  }
  await run.exited;
}

describe("a session killed with kill -9 resumes with hermes -c", () => {
  it("(the fake answers 400 to unpaired tool blocks, as the real API does)", async () => {
    const post = (messages: unknown[]) =>
      fetch(`${llm.url}/messages`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "claude-fake", max_tokens: 10, messages }),
      });
    const use = { type: "tool_use", id: "toolu_x", name: "terminal", input: {} };
    const orphanCall = await post([
      { role: "user", content: [{ type: "text", text: "q" }] },
      { role: "assistant", content: [use] },
      { role: "user", content: [{ type: "text", text: "next" }] },
    ]);
    expect(orphanCall.status).toBe(400);
    expect(await orphanCall.text()).toContain("`tool_use` ids were found without `tool_result` blocks");
    const orphanResult = await post([
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_y", content: "x" }] },
    ]);
    expect(orphanResult.status).toBe(400);
    expect(await orphanResult.text()).toContain("unexpected `tool_use_id`");
    expect(llm.pending).toBe(0);
  });

  it("during a tool call: the call is answered as interrupted, once, and the model continues", async () => {
    const h = home();
    llm.enqueue(
      reply()
        .text("Starting the long job.")
        .toolCall("terminal", { command: "sleep 60 & echo $! > job.pid; wait" }, "toolu_long_job"),
    );
    const pidFile = join(h.cwd, "job.pid");
    await killWhen(
      ["-q", "run the long job"],
      h,
      () => {
        try {
          return readFileSync(pidFile, "utf8").trim() !== "";
        } catch {
          return false;
        }
      },
      "the tool's command to start",
    );
    // The command outlived the killed hermes (nothing could stop it): end it here.
    const jobPid = Number(readFileSync(pidFile, "utf8"));
    if (isRunning(jobPid)) process.kill(jobPid, "SIGKILL");
    const [crashed] = stored(h);
    expect(crashed?.messages.map((m) => m.role)).toEqual(["user", "assistant"]);

    llm.enqueue(reply().text("The job was interrupted; I will start it again."));
    const resumed = await runHermes(["-c", "-q", "did it finish?"], h);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("The job was interrupted; I will start it again.");
    expect(resumed.stderr).toContain("1 tool call never returned");
    const request = sent(1);
    expect(request.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    const answer = (request[2]!.content as Block[])[0];
    expect(answer).toMatchObject({ type: "tool_result", tool_use_id: "toolu_long_job" });
    expect(JSON.stringify(answer?.content)).toContain("may or may not have taken effect");
    // The stand-in is in the transcript, written once.
    const [after] = stored(h);
    expect(after?.messages.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", tool_call_id: "toolu_long_job", name: "terminal", content: INTERRUPTED_TOOL_RESULT },
    ]);
    expect(after?.messages.at(-1)).toMatchObject({ role: "assistant", finish_reason: "stop" });
  }, 60_000);

  it("during streaming: the question stays, the next request is valid and answered", async () => {
    const h = home();
    llm.enqueue(
      stallMidStream(4, reply().text("The first line.\nThe second part of an answer that never finishes.")),
    );
    // On a terminal the answer streams line by line (rendered as markdown): kill once the first line is on screen.
    await killWhen(
      ["-q", "explain everything"],
      { ...h, tty: true },
      (o) => o.stdout.includes("The first"),
      "the first chunk",
    );
    const [crashed] = stored(h);
    expect(crashed?.messages).toEqual([{ role: "user", content: "explain everything" }]);

    llm.enqueue(reply().text("Here is the whole explanation."));
    const resumed = await runHermes(["-c", "-q", "are you there?"], h);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("Here is the whole explanation.");
    // Both questions reach the model, in one user turn (roles must alternate).
    const request = sent(1);
    expect(request).toHaveLength(1);
    expect(JSON.stringify(request[0])).toContain("explain everything");
    expect(JSON.stringify(request[0])).toContain("are you there?");
  }, 60_000);

  it("during a compression: the session resumes whole, never half-compressed", async () => {
    // A 4,000-token window: a prompt past 2,000 tokens compresses before the next model call.
    const h = home("  context_length: 4000\n");
    const bigOutput = { command: "seq 1 700" };
    llm.enqueue(
      reply().toolCall("terminal", bigOutput, "toolu_1").usage({ prompt: 200, completion: 10 }),
      reply().toolCall("terminal", bigOutput, "toolu_2").usage({ prompt: 900, completion: 10 }),
      reply().toolCall("terminal", bigOutput, "toolu_3").usage({ prompt: 1600, completion: 10 }),
      // The summary request: never answered, so hermes is killed while it is in flight.
      hang(),
    );
    await killWhen(["-q", "count three times"], h, () => llm.chatRequests.length >= 4, "the summary request");
    expect(JSON.stringify(llm.chatRequests[3]?.body)).toMatch(/summar/i);
    const before = stored(h);
    expect(before).toHaveLength(1);
    expect(before[0]?.session.endReason).toBeNull();
    expect(before[0]?.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
      "tool",
    ]);

    llm.enqueue(reply().text("All three counts are done."));
    const resumed = await runHermes(["-c", "-q", "and now?"], h);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("All three counts are done.");
    const after = stored(h);
    expect(after).toHaveLength(1);
    expect(after[0]?.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "All three counts are done.",
    });
  }, 60_000);
});
