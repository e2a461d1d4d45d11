/**
 * What a run knows before the agent starts: the output of the job's script and the last output
 * of the jobs named in `context_from`, as blocks prepended to the prompt (Python Hermes's
 * headings), or the decision that no agent runs at all (`no_agent`, an empty script output, a
 * `{"wakeAgent": false}` gate, a script that was refused).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CronJob } from "../knowledge/cron/types.js";
import type { CronRunResult } from "./scheduler.js";
import { type RunCronScriptOptions, runCronScript, wakesAgent } from "./script.js";

/** Characters of another job's output handed on (upstream's cap). */
export const MAX_CONTEXT_CHARS = 8000;

const JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** `context_from` as a list of ids: a string, a list, or nothing. */
export function contextSources(job: CronJob): string[] {
  const raw = job["context_from"];
  const list = typeof raw === "string" ? [raw] : Array.isArray(raw) ? raw : [];
  return list.map((v) => String(v).trim()).filter(Boolean);
}

/**
 * The answer part of a saved run (`## Response` up to `## Error`), or the whole file when it has
 * no such heading (a file written by another version). Undefined when there is no answer.
 */
export function answerOf(saved: string): string | undefined {
  const at = saved.indexOf("\n## Response\n");
  let text = at >= 0 ? saved.slice(at + "\n## Response\n".length) : saved;
  const error = text.indexOf("\n## Error\n");
  if (error >= 0) text = text.slice(0, error);
  text = text.trim();
  if (!text || text === "(no output)") return undefined;
  return text;
}

/** The newest saved output of job `id`, cut to {@link MAX_CONTEXT_CHARS}; undefined when none. */
export function lastOutput(home: string, id: string): string | undefined {
  // Ids name folders: anything that could leave cron/output/ is skipped, as upstream does.
  if (!JOB_ID.test(id)) return undefined;
  const dir = join(home, "cron", "output", id);
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith(".md"))
      .sort();
  } catch {
    return undefined;
  }
  for (const file of files.reverse()) {
    let text: string | undefined;
    try {
      text = answerOf(readFileSync(join(dir, file), "utf8"));
    } catch {
      continue;
    }
    if (!text) continue;
    return text.length > MAX_CONTEXT_CHARS
      ? `${text.slice(0, MAX_CONTEXT_CHARS)}\n\n[... output truncated ...]`
      : text;
  }
  return undefined;
}

function fenced(text: string): string {
  // A fence longer than any run of backticks inside keeps the data from closing it early.
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}\n${text}\n${fence}`;
}

export type PreRun =
  /** The run ends here with this result (no agent). */
  | { done: CronRunResult }
  /** Blocks to put before the prompt; empty when the job has neither script nor context_from. */
  | { context: string[] };

/** Runs the job's script (if any) and gathers `context_from`; decides whether the agent runs. */
export async function prepareRun(job: CronJob, options: RunCronScriptOptions): Promise<PreRun> {
  const script = typeof job["script"] === "string" && job["script"].trim() ? job["script"].trim() : undefined;
  const noAgent = job["no_agent"] === true;
  if (noAgent && !script) {
    return {
      done: {
        ok: false,
        output: "",
        error: "no_agent is set but the job has no script: there is nothing to run.",
      },
    };
  }
  const context: string[] = [];
  if (script) {
    const ran = await runCronScript(script, {
      ...options,
      ...(typeof job.workdir === "string" ? { workdir: job.workdir } : {}),
    });
    if (ran.status === "refused") return { done: { ok: false, output: "", error: ran.error } };
    if (noAgent) {
      // The script is the job: its output is the message; nothing printed (or the gate) is silence.
      if (ran.status === "failed") return { done: { ok: false, output: "", error: ran.error } };
      if (!ran.output || !wakesAgent(ran.output)) return { done: { ok: true, output: "", silent: true } };
      return { done: { ok: true, output: ran.output } };
    }
    if (ran.status === "failed") {
      context.push(
        `## Script Error\nThe data-collection script failed. Report this to the user.\n\n${fenced(ran.error)}`,
      );
    } else if (!ran.output || !wakesAgent(ran.output)) {
      return { done: { ok: true, output: "", silent: true } };
    } else {
      context.push(
        `## Script Output\nThe following data was collected by a pre-run script. Use it as context for your analysis.\n\n${fenced(ran.output)}`,
      );
    }
  }
  for (const id of contextSources(job)) {
    const text = lastOutput(options.home, id === "self" ? job.id : id);
    if (!text) continue;
    context.push(
      `## Output from job '${id}'\nThe following is the most recent output from a preceding cron job. Use it as context for your analysis.\n\n${fenced(text)}`,
    );
  }
  return { context };
}
