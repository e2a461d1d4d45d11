/**
 * The environment's main loop against an Atropos API server, as `BaseEnv.env_manager` runs it:
 * register (waiting while the server says the trainer has not started), read the trainer's batch
 * size and token limit, then per item: check the server's status (stop once the trainer's steps
 * are used up, wait while `max_batches_offpolicy` batches are already queued), roll the item out
 * `group_size` times in parallel, score, tokenize and send one `ScoredDataGroup` to
 * `/scored_data`. Groups Atropos would reject are dropped here with the reason, as `BaseEnv`
 * drops them: a group whose rollouts all scored the same (no learning signal; unless
 * `allowSameScores`), a sequence at or over the trainer's `max_token_len`, or a failed rollout.
 * With `workers` above 1, that many groups are in flight at once (BaseEnv's worker pool): each
 * group in flight counts against the server's queue checks, so the environment never runs past
 * the trainer's steps or the off-policy limit by more than the groups already started.
 *
 * Rollouts and the clock are injected, so the loop is tested without a model.
 */
import { redactJson, redactText } from "../util/redact.js";
import type { AtroposClient, EnvStatus } from "./atropos-client.js";
import type { ScoredRollout } from "./rollout.js";
import { tokenizeConversation } from "./tokenize.js";
import type { RlEnvironment, RlItem, ScoredDataGroup } from "./types.js";

export interface ServeOptions<I extends RlItem> {
  client: Pick<AtroposClient, "registerEnv" | "info" | "statusEnv" | "sendScoredData" | "disconnectEnv">;
  environment: RlEnvironment<I>;
  rollout: (item: I, signal: AbortSignal) => Promise<ScoredRollout>;
  groupSize: number;
  /** Groups rolled out at the same time (default 1). */
  workers?: number;
  /** Stop after this many items (groups attempted); default: until the source or the trainer's steps end. */
  maxTasks?: number;
  /** `max_token_length` registered with the server. */
  maxTokenLength: number;
  weight?: number;
  /** Batches the server may hold before this environment waits (BaseEnv's `max_batches_offpolicy`, 3). */
  maxBatchesOffpolicy?: number;
  /** Send the conversations with each group (`include_messages`). */
  includeMessages?: boolean;
  /** Send groups whose rollouts all scored the same (BaseEnv's `ensure_scores_are_not_same: false`). */
  allowSameScores?: boolean;
  signal: AbortSignal;
  /** Progress lines (stderr). */
  log: (line: string) => void;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Wait between polls of a busy or not yet started server; default 1 s. */
  pollMs?: number;
}

export interface ServeSummary {
  envId: number | undefined;
  groupsSent: number;
  groupsDropped: number;
  rollouts: number;
  meanScore: number | null;
  stoppedBecause: "source_exhausted" | "max_tasks" | "trainer_done" | "interrupted";
}

const abortableSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });

/** Why a group must not be sent (BaseEnv's checks), or undefined when it may. */
export function groupProblem(
  group: Pick<ScoredDataGroup, "tokens" | "scores">,
  groupSize: number,
  maxTokenLen: number,
  allowSameScores: boolean,
): string | undefined {
  if (group.tokens.length !== groupSize) return `it has ${group.tokens.length} rollouts, not ${groupSize}`;
  if (!allowSameScores && new Set(group.scores).size === 1) {
    return `every rollout scored ${group.scores[0]}, so it carries no learning signal (--allow-same-scores sends it anyway)`;
  }
  if (maxTokenLen > 0) {
    const longest = Math.max(...group.tokens.map((t) => t.length));
    if (longest >= maxTokenLen)
      return `a rollout has ${longest} tokens, at or over the trainer's max_token_len ${maxTokenLen}`;
  }
  return undefined;
}

/**
 * Builds the group Atropos takes from scored rollouts. The conversations leave the process here,
 * so they pass the secret redactor first (a key a command printed becomes the redaction marker in
 * both the tokens and the messages), as every other path out does.
 */
export function buildGroup(
  rollouts: readonly ScoredRollout[],
  envId: number,
  includeMessages: boolean,
  redact: (text: string) => string = redactText,
): ScoredDataGroup {
  const tokenized = rollouts.map((r) => tokenizeConversation(redactJson(r.messages, redact)));
  return {
    tokens: tokenized.map((t) => t.tokens),
    masks: tokenized.map((t) => t.masks),
    scores: rollouts.map((r) => r.score),
    advantages: null,
    ref_logprobs: null,
    messages: includeMessages ? tokenized.map((t) => t.messages) : null,
    generation_params: null,
    inference_logprobs: null,
    overrides: null,
    group_overrides: null,
    images: null,
    env_id: envId,
  };
}

async function retrying<T>(what: string, fn: () => Promise<T>, options: ServeOptions<RlItem>): Promise<T> {
  const sleep = options.sleep ?? abortableSleep;
  let last: unknown;
  // BaseEnv retries sends three times; a 4xx is the payload's fault and is not retried.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await fn();
    } catch (error) {
      last = error;
      const status = (error as { status?: number }).status;
      if (options.signal.aborted || (status !== undefined && status >= 400 && status < 500)) throw error;
      options.log(`${what} failed (${(error as Error).message}); retrying`);
      await sleep(1000 * 2 ** attempt, options.signal);
    }
  }
  throw last;
}

export async function serveEnvironment<I extends RlItem>(options: ServeOptions<I>): Promise<ServeSummary> {
  const { client, environment, signal, log, groupSize } = options;
  const sleep = options.sleep ?? abortableSleep;
  const pollMs = options.pollMs ?? 1000;
  const generic = options as unknown as ServeOptions<RlItem>;
  const summary: ServeSummary = {
    envId: undefined,
    groupsSent: 0,
    groupsDropped: 0,
    rollouts: 0,
    meanScore: null,
    stoppedBecause: "source_exhausted",
  };
  let scoreSum = 0;

  let registration: Awaited<ReturnType<typeof client.registerEnv>>;
  let waited = false;
  for (;;) {
    if (signal.aborted) return { ...summary, stoppedBecause: "interrupted" };
    registration = await retrying(
      "POST /register-env",
      () =>
        client.registerEnv(
          {
            max_token_length: options.maxTokenLength,
            desired_name: environment.name,
            weight: options.weight ?? 1,
            min_batch_allocation: null,
            group_size: groupSize,
          },
          signal,
        ),
      generic,
    );
    if (registration.status === "success" && "env_id" in registration) break;
    if (!waited) log(`The server says "${registration.status}"; waiting for the trainer to start...`);
    waited = true;
    await sleep(pollMs, signal);
  }
  const envId = registration.env_id;
  summary.envId = envId;
  const info = await client.info(signal);
  const totalSteps = registration.num_steps;
  log(
    `Registered ${environment.name} as env ${envId} (${registration.wandb_name}); trainer batch size ${info.batch_size}, max_token_len ${info.max_token_len}, step ${registration.starting_step}.`,
  );

  const batchSize = info.batch_size > 0 ? info.batch_size : groupSize;
  const offpolicy = options.maxBatchesOffpolicy ?? 3;
  const workers = Math.max(1, Math.floor(options.workers ?? 1));
  const inFlight = new Set<Promise<void>>();
  let attempted = 0;
  let stopped = false;

  /** Rolls one item out as a group, scores, checks and sends it; never rejects but for the server. */
  const runGroup = async (item: I): Promise<void> => {
    const settled = await Promise.allSettled(
      Array.from({ length: groupSize }, () => options.rollout(item, signal)),
    );
    const failed = settled.filter((s): s is PromiseRejectedResult => s.status === "rejected");
    if (signal.aborted) return;
    if (failed.length > 0) {
      summary.groupsDropped++;
      log(
        `${item.id}: group dropped: ${failed.length} of ${groupSize} rollouts failed (${String((failed[0]?.reason as Error)?.message ?? failed[0]?.reason)})`,
      );
      return;
    }
    const rollouts = settled.map((s) => (s as PromiseFulfilledResult<ScoredRollout>).value);
    summary.rollouts += rollouts.length;
    for (const r of rollouts) scoreSum += r.score;
    const group = buildGroup(rollouts, envId, options.includeMessages === true);
    const problem = groupProblem(group, groupSize, info.max_token_len, options.allowSameScores === true);
    const scores = `scores [${group.scores.map((s) => Number(s.toFixed(3))).join(", ")}]`;
    if (problem) {
      summary.groupsDropped++;
      log(`${item.id}: ${scores}; not sent: ${problem}`);
      return;
    }
    const answer = await retrying("POST /scored_data", () => client.sendScoredData(group, signal), generic);
    summary.groupsSent++;
    log(`${item.id}: ${scores}; sent (${String(answer["status"] ?? "ok")})`);
  };
  let failure: unknown;
  const launch = (item: I) => {
    const running: Promise<void> = runGroup(item)
      .catch((error: unknown) => {
        // A server failure ends the run (as it did with one group at a time) once the others finish.
        failure ??= error;
        stopped = true;
      })
      .finally(() => inFlight.delete(running));
    inFlight.add(running);
  };
  const stop = (why: ServeSummary["stoppedBecause"]) => {
    summary.stoppedBecause = why;
    stopped = true;
  };

  try {
    while (!stopped) {
      if (signal.aborted) {
        stop("interrupted");
        break;
      }
      if (inFlight.size >= workers) {
        await Promise.race(inFlight);
        continue;
      }
      if (options.maxTasks !== undefined && attempted >= options.maxTasks) {
        stop("max_tasks");
        break;
      }
      const status: EnvStatus = await retrying(
        "GET /status-env",
        () => client.statusEnv(envId, signal),
        generic,
      );
      // Groups still rolling out will join the queue: count them as queued.
      const queued = status.queue_size + inFlight.size;
      if (totalSteps > 0 && status.current_step + Math.floor((queued * groupSize) / batchSize) > totalSteps) {
        stop("trainer_done");
        break;
      }
      if (offpolicy > 0 && queued * groupSize >= offpolicy * batchSize) {
        if (inFlight.size > 0) await Promise.race([...inFlight, sleep(pollMs, signal)]);
        else await sleep(pollMs, signal);
        continue;
      }
      const item = await environment.nextItem();
      if (!item) {
        stop("source_exhausted");
        break;
      }
      attempted++;
      launch(item);
    }
    await Promise.all(inFlight);
    if (signal.aborted) summary.stoppedBecause = "interrupted";
    if (failure !== undefined) throw failure;
  } finally {
    // Tell the server this env is gone so it stops counting its weight; best effort.
    await client.disconnectEnv(envId).catch(() => undefined);
  }
  summary.meanScore = summary.rollouts > 0 ? scoreSum / summary.rollouts : null;
  return summary;
}
