import { decode } from "gpt-tokenizer/encoding/o200k_base";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { AtroposClient, AtroposError } from "../../../src/rl/atropos-client.js";
import type { ScoredRollout } from "../../../src/rl/rollout.js";
import { buildGroup, groupProblem, type ServeOptions, serveEnvironment } from "../../../src/rl/serve.js";
import { MASKED } from "../../../src/rl/tokenize.js";
import type { RlEnvironment, RlItem } from "../../../src/rl/types.js";
import { type FakeAtropos, startFakeAtropos, validate } from "../../support/fake-atropos.js";

let atropos: FakeAtropos;
beforeEach(async () => {
  atropos = await startFakeAtropos();
});
afterEach(async () => {
  await atropos.close();
});

function source(ids: string[]): RlEnvironment {
  const queue = [...ids];
  return {
    name: "test-env",
    description: "test",
    nextItem: async () => {
      const id = queue.shift();
      return id ? { id, prompt: `do ${id}` } : undefined;
    },
    prepare: async () => undefined,
    score: async () => 0,
  };
}

const conversation = (answer: string): Message[] => [
  { role: "system", content: "sys" },
  { role: "user", content: "task" },
  { role: "assistant", content: answer },
];

/** Rollouts that score 1, 0, 1, 0... so every group has a learning signal. */
function alternating(): (item: RlItem) => Promise<ScoredRollout> {
  let n = 0;
  return async (item) => {
    const score = n++ % 2 === 0 ? 1 : 0;
    return {
      messages: conversation(`${item.id} answer ${score}`),
      sessionId: undefined,
      reason: "completed",
      workdir: "/tmp",
      score,
    };
  };
}

function options(overrides: Partial<ServeOptions<RlItem>> = {}): ServeOptions<RlItem> & { lines: string[] } {
  const lines: string[] = [];
  return {
    client: new AtroposClient(atropos.url),
    environment: source(["t1", "t2"]),
    rollout: alternating(),
    groupSize: 2,
    maxTokenLength: 4096,
    signal: new AbortController().signal,
    log: (line) => lines.push(line),
    sleep: async () => undefined,
    ...overrides,
    lines,
  };
}

describe("serveEnvironment against the Atropos fake", () => {
  it("registers, rolls out each task as a group and sends groups the server accepts", async () => {
    await atropos.startTrainer({ batch_size: 4, max_token_len: 8192 });
    const opts = options();
    const summary = await serveEnvironment(opts);
    expect(summary).toMatchObject({
      envId: 0,
      groupsSent: 2,
      groupsDropped: 0,
      rollouts: 4,
      meanScore: 0.5,
      stoppedBecause: "source_exhausted",
    });
    expect(atropos.envs[0]).toMatchObject({ desired_name: "test-env", group_size: 2, connected: false });
    const sent = atropos.scored;
    expect(sent).toHaveLength(2);
    for (const group of sent) {
      expect(group["env_id"]).toBe(0);
      expect(group["scores"]).toEqual([1, 0]);
      const tokens = group["tokens"] as number[][];
      const masks = group["masks"] as number[][];
      expect(masks.map((m) => m.length)).toEqual(tokens.map((t) => t.length));
      expect(masks[0]?.some((m) => m === MASKED)).toBe(true);
      expect(masks[0]?.some((m) => m !== MASKED)).toBe(true);
      expect(group["messages"]).toBeNull();
    }
    const routes = atropos.requests.map((r) => `${r.method} ${r.path}`);
    expect(routes).toContain("GET /status-env");
    expect(routes.at(-1)).toBe("POST /disconnect-env");
    // Two groups of two make one batch of four for the trainer.
    const batch = (await (await fetch(`${atropos.url}/batch`)).json()) as { batch: unknown[] | null };
    expect(batch.batch).toHaveLength(2);
  });

  it("waits while the trainer has not started, then registers", async () => {
    let polls = 0;
    const opts = options({
      environment: source(["t1"]),
      sleep: async () => {
        polls++;
        if (polls === 2) await atropos.startTrainer();
      },
    });
    await fetch(`${atropos.url}/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        wandb_group: "g",
        wandb_project: "p",
        batch_size: 4,
        max_token_len: 8192,
        checkpoint_dir: "",
        save_checkpoint_interval: 1,
        starting_step: 0,
        num_steps: 10,
      }),
    });
    const summary = await serveEnvironment(opts);
    expect(summary.groupsSent).toBe(1);
    expect(opts.lines[0]).toMatch(/wait for trainer to start/);
  });

  it("drops a group whose rollouts all scored the same, unless told to send it", async () => {
    await atropos.startTrainer();
    const same = async (item: RlItem): Promise<ScoredRollout> => ({
      messages: conversation(item.id),
      sessionId: undefined,
      reason: "completed",
      workdir: "/tmp",
      score: 1,
    });
    const dropped = options({ environment: source(["t1"]), rollout: same });
    expect(await serveEnvironment(dropped)).toMatchObject({ groupsSent: 0, groupsDropped: 1 });
    expect(dropped.lines.join("\n")).toMatch(/every rollout scored 1/);
    expect(atropos.scored).toHaveLength(0);
    const sent = options({ environment: source(["t2"]), rollout: same, allowSameScores: true });
    expect(await serveEnvironment(sent)).toMatchObject({ groupsSent: 1 });
  });

  it("drops a group with a failed rollout and goes on with the next task", async () => {
    await atropos.startTrainer();
    const rollouts = alternating();
    const opts = options({
      rollout: async (item) => {
        if (item.id === "t1") throw new Error("Setup of t1 exited with code 1");
        return rollouts(item);
      },
    });
    expect(await serveEnvironment(opts)).toMatchObject({ groupsSent: 1, groupsDropped: 1 });
    expect(opts.lines.join("\n")).toMatch(/t1: group dropped: 2 of 2 rollouts failed \(Setup of t1/);
  });

  it("does not send sequences at or over the trainer's max_token_len", async () => {
    await atropos.startTrainer({ max_token_len: 5 });
    const opts = options({ environment: source(["t1"]) });
    expect(await serveEnvironment(opts)).toMatchObject({ groupsSent: 0, groupsDropped: 1 });
    expect(opts.lines.join("\n")).toMatch(/max_token_len 5/);
  });

  it("stops after --max-tasks and once the trainer's steps are used up", async () => {
    await atropos.startTrainer();
    expect(
      await serveEnvironment(options({ environment: source(["a", "b", "c"]), maxTasks: 1 })),
    ).toMatchObject({ groupsSent: 1, stoppedBecause: "max_tasks" });
    await fetch(`${atropos.url}/reset_data`);
    await atropos.startTrainer({ num_steps: 1, starting_step: 2 });
    expect(await serveEnvironment(options({ environment: source(["a"]) }))).toMatchObject({
      groupsSent: 0,
      stoppedBecause: "trainer_done",
    });
  });

  it("sends the conversations with --include-messages, gzip-compressed as BaseEnv sends large bodies", async () => {
    await atropos.startTrainer();
    await serveEnvironment(options({ environment: source(["t1"]), includeMessages: true }));
    const post = atropos.requests.find((r) => r.path === "/scored_data");
    expect(post?.encoding).toBe("gzip");
    const messages = atropos.scored[0]?.["messages"] as { role: string; content: string }[][];
    expect(messages[0]?.map((m) => m.role)).toEqual(["system", "user", "assistant"]);
  });

  it("stops at once when interrupted, and disconnects", async () => {
    await atropos.startTrainer();
    const controller = new AbortController();
    const opts = options({
      signal: controller.signal,
      rollout: async () => {
        controller.abort();
        throw new Error("interrupted");
      },
    });
    expect(await serveEnvironment(opts)).toMatchObject({ groupsSent: 0, stoppedBecause: "interrupted" });
    expect(atropos.requests.at(-1)?.path).toBe("/disconnect-env");
  });
});

describe("what the fake and the client check", () => {
  it("answers a malformed group with 422, which the client reports and does not retry", async () => {
    await atropos.startTrainer();
    const client = new AtroposClient(atropos.url);
    const bad = { tokens: [[1, 2]], masks: [[1, "x"]], scores: [1], messages: [[{ role: "user" }]] };
    const error = await client.sendScoredData(bad as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AtroposError);
    expect((error as AtroposError).status).toBe(422);
    expect((error as Error).message).toMatch(/masks/);
    expect(validate({ env_id: { type: "int" } }, { env_id: "0" })?.[0]?.["loc"]).toEqual(["body", "env_id"]);
  });

  it("names an unreachable server and a bad URL", async () => {
    const url = atropos.url;
    await atropos.close();
    atropos = await startFakeAtropos();
    await expect(new AtroposClient(url).info()).rejects.toThrow(
      /GET \/info at http:\/\/127\.0\.0\.1:\d+ failed/,
    );
    expect(() => new AtroposClient("localhost:8000")).toThrow(/must be http\(s\)|is not a URL/);
  });

  it("redacts secrets from the tokens and the messages before they leave the process", () => {
    const key = "sk-proj-Abcdefghijklmnopqrstuvwx0123456789";
    const leaky: Message[] = [
      ...conversation("ok"),
      { role: "tool", tool_call_id: "c", content: `OPENAI_API_KEY=${key}` },
      { role: "assistant", content: `The key is ${key}` },
    ];
    const group = buildGroup(
      [{ messages: leaky, sessionId: undefined, reason: "completed", workdir: "/", score: 1 }],
      0,
      true,
    );
    expect(JSON.stringify(group.messages)).not.toContain(key);
    expect(decode(group.tokens[0] ?? [])).not.toContain(key);
    expect(decode(group.tokens[0] ?? [])).toContain("The key is ");
  });

  it("builds groups the server's model accepts, and says why a group is refused", () => {
    const rollouts = [0, 1].map((score) => ({
      messages: conversation(String(score)),
      sessionId: undefined,
      reason: "completed",
      workdir: "/",
      score,
    }));
    const group = buildGroup(rollouts, 3, true);
    expect(
      validate(
        { tokens: { type: "int[][]" }, masks: { type: "int[][]" }, scores: { type: "float[]" } },
        group,
      ),
    ).toBeUndefined();
    expect(groupProblem(group, 3, 0, false)).toMatch(/2 rollouts, not 3/);
    expect(groupProblem(group, 2, -1, false)).toBeUndefined();
  });
});
