/**
 * `hermes rl serve --workers N`: N groups roll out at once against the Atropos fake, every group
 * is sent exactly once, groups in flight count against the server's off-policy limit, and an
 * interrupt waits for the groups in flight without sending them.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "../../../src/ai/types.js";
import { AtroposClient } from "../../../src/rl/atropos-client.js";
import type { ScoredRollout } from "../../../src/rl/rollout.js";
import { type ServeOptions, serveEnvironment } from "../../../src/rl/serve.js";
import type { RlEnvironment, RlItem } from "../../../src/rl/types.js";
import { type FakeAtropos, startFakeAtropos } from "../../support/fake-atropos.js";

let atropos: FakeAtropos;
beforeEach(async () => {
  atropos = await startFakeAtropos();
});
afterEach(async () => {
  await atropos.close();
});

function source(count: number): RlEnvironment {
  const queue = Array.from({ length: count }, (_, i) => `t${i + 1}`);
  return {
    name: "workers-env",
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
  { role: "user", content: "task" },
  { role: "assistant", content: answer },
];

/** Rollouts that take `ms`, alternate scores 1/0, and record how many groups run at once. */
function timed(ms: number) {
  const running = new Map<string, number>();
  let peak = 0;
  let n = 0;
  const started: string[] = [];
  const rollout = async (item: RlItem, signal: AbortSignal): Promise<ScoredRollout> => {
    running.set(item.id, (running.get(item.id) ?? 0) + 1);
    if (!started.includes(item.id)) started.push(item.id);
    peak = Math.max(peak, running.size);
    await new Promise<void>((r) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        r();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
    });
    const left = (running.get(item.id) ?? 1) - 1;
    if (left === 0) running.delete(item.id);
    else running.set(item.id, left);
    const score = n++ % 2;
    return {
      messages: conversation(`${item.id} ${score}`),
      sessionId: undefined,
      reason: "completed",
      workdir: "/tmp",
      score,
    };
  };
  return { rollout, peak: () => peak, started };
}

function options(overrides: Partial<ServeOptions<RlItem>>): ServeOptions<RlItem> & { lines: string[] } {
  const lines: string[] = [];
  return {
    client: new AtroposClient(atropos.url),
    environment: source(6),
    rollout: timed(1).rollout,
    groupSize: 2,
    maxTokenLength: 4096,
    signal: new AbortController().signal,
    log: (line) => lines.push(line),
    sleep: async (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 5))),
    pollMs: 5,
    ...overrides,
    lines,
  };
}

describe("serveEnvironment with workers", () => {
  it("rolls 3 groups out at once and sends each of 6 exactly once", async () => {
    await atropos.startTrainer({ batch_size: 64, num_steps: 100 });
    const t = timed(40);
    const summary = await serveEnvironment(
      options({ rollout: t.rollout, workers: 3, maxBatchesOffpolicy: 0 }),
    );
    expect(summary).toMatchObject({
      groupsSent: 6,
      groupsDropped: 0,
      rollouts: 12,
      stoppedBecause: "source_exhausted",
    });
    expect(t.peak()).toBe(3);
    expect(atropos.scored).toHaveLength(6);
    const routes = atropos.requests.map((r) => `${r.method} ${r.path}`);
    expect(routes.filter((r) => r === "POST /scored_data")).toHaveLength(6);
    expect(routes.at(-1)).toBe("POST /disconnect-env");
  });

  it("one worker (the default) rolls one group at a time", async () => {
    await atropos.startTrainer({ batch_size: 64, num_steps: 100 });
    const t = timed(10);
    const summary = await serveEnvironment(options({ rollout: t.rollout, environment: source(3) }));
    expect(summary.groupsSent).toBe(3);
    expect(t.peak()).toBe(1);
  });

  it("counts groups in flight against the off-policy limit: 4 workers never run past it", async () => {
    // batch_size 4, group_size 2, max_batches_offpolicy 1: at most 2 groups queued or in flight.
    await atropos.startTrainer({ batch_size: 4, num_steps: 100 });
    const t = timed(30);
    const summary = await serveEnvironment(
      options({ rollout: t.rollout, workers: 4, maxBatchesOffpolicy: 1, maxTasks: 2 }),
    );
    expect(t.peak()).toBe(2);
    expect(summary).toMatchObject({ groupsSent: 2, stoppedBecause: "max_tasks" });
  });

  it("an interrupt stops launching, waits for the groups in flight and sends none of them", async () => {
    await atropos.startTrainer({ batch_size: 64, num_steps: 100 });
    const controller = new AbortController();
    const t = timed(10_000);
    const serving = serveEnvironment(
      options({ rollout: t.rollout, workers: 3, maxBatchesOffpolicy: 0, signal: controller.signal }),
    );
    while (t.started.length < 3) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const summary = await serving;
    expect(summary).toMatchObject({ groupsSent: 0, stoppedBecause: "interrupted" });
    expect(t.started).toEqual(["t1", "t2", "t3"]);
    expect(atropos.scored).toHaveLength(0);
  });
});
