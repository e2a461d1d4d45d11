/**
 * `hermes trajectories compress`: every entry of one JSONL file, or of every `.jsonl` in a folder,
 * compressed into a token budget (plan.ts) with the middle summarised by the auxiliary model; at most
 * `workers` summaries in flight at once across all files. An entry that fits is written unchanged;
 * a compressed one carries `compression_metrics` (upstream's fields). Each output file is written
 * atomically, entries in input order; an entry that cannot be read or compressed is written as it
 * was and counted, so nothing is lost. Tokens are counted with o200k_base (gpt-tokenizer).
 */
import { readdirSync, statSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { atomicWriteFile } from "../../util/atomic-write.js";
import {
  assembleCompressed,
  type CompressionSettings,
  finishSummary,
  planCompression,
  SUMMARY_FALLBACK,
  summaryPrompt,
} from "./plan.js";

/** Asks the auxiliary model; rejects on failure (the entry then gets upstream's fallback summary). */
export type Summarise = (prompt: string, maxTokens: number) => Promise<string>;

export interface EntryMetrics {
  original_tokens: number;
  compressed_tokens: number;
  tokens_saved: number;
  compression_ratio: number;
  original_turns: number;
  compressed_turns: number;
  turns_removed: number;
  compression_region: { start_idx: number; end_idx: number; turns_count: number };
  was_compressed: boolean;
  still_over_limit: boolean;
  skipped_under_target: boolean;
  summarization_api_calls: number;
  summarization_errors: number;
}

export interface FileReport {
  input: string;
  output: string;
  entries: number;
  compressed: number;
  skipped_under_target: number;
  still_over_limit: number;
  /** Lines that were not JSON trajectories, or whose compression threw: written unchanged. */
  unreadable: number;
  summarization_errors: number;
  tokens_before: number;
  tokens_after: number;
}

const PLAIN = { disallowedSpecial: new Set<string>() } as const;
export function tokenCount(text: string): number {
  return text ? countTokens(text, PLAIN as never) : 0;
}

type Turn = { from: string; value: string };

function isTrajectory(entry: unknown): entry is { conversations: Turn[] } {
  if (typeof entry !== "object" || entry === null) return false;
  const c = (entry as { conversations?: unknown }).conversations;
  return (
    Array.isArray(c) &&
    c.every(
      (t) =>
        typeof t === "object" &&
        t !== null &&
        typeof (t as Turn).from === "string" &&
        typeof (t as Turn).value === "string",
    )
  );
}

/** Compresses one entry's conversations; returns the entry to write and its metrics. */
export async function compressEntry(
  entry: { conversations: Turn[] } & Record<string, unknown>,
  settings: CompressionSettings,
  summarise: Summarise,
): Promise<{ entry: Record<string, unknown>; metrics: EntryMetrics }> {
  const turns = entry.conversations;
  const tokens = turns.map((t) => tokenCount(t.value));
  const total = tokens.reduce((a, b) => a + b, 0);
  const metrics: EntryMetrics = {
    original_tokens: total,
    compressed_tokens: total,
    tokens_saved: 0,
    compression_ratio: 1,
    original_turns: turns.length,
    compressed_turns: turns.length,
    turns_removed: 0,
    compression_region: { start_idx: -1, end_idx: -1, turns_count: 0 },
    was_compressed: false,
    still_over_limit: total > settings.targetTokens,
    skipped_under_target: total <= settings.targetTokens,
    summarization_api_calls: 0,
    summarization_errors: 0,
  };
  const region = planCompression(turns, tokens, settings);
  if (!region) return { entry, metrics };
  let summary: string;
  metrics.summarization_api_calls += 1;
  try {
    summary = finishSummary(
      await summarise(summaryPrompt(turns, region, settings.summaryTokens), settings.summaryTokens * 2),
    );
  } catch {
    metrics.summarization_errors += 1;
    summary = SUMMARY_FALLBACK;
  }
  const compressed = assembleCompressed(turns, region, summary);
  const after = compressed.reduce((a, t) => a + tokenCount(t.value), 0);
  Object.assign(metrics, {
    compressed_tokens: after,
    tokens_saved: total - after,
    compression_ratio: Math.round((after / Math.max(total, 1)) * 10_000) / 10_000,
    compressed_turns: compressed.length,
    turns_removed: turns.length - compressed.length,
    compression_region: {
      start_idx: region.start,
      end_idx: region.until,
      turns_count: region.until - region.start,
    },
    was_compressed: true,
    still_over_limit: after > settings.targetTokens,
  });
  return { entry: { ...entry, conversations: compressed, compression_metrics: metrics }, metrics };
}

/** A semaphore: at most `limit` of the functions run at once. */
function limiter(limit: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= limit) await new Promise<void>((r) => waiting.push(r));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

/**
 * The (input, output) file pairs: a file to a file, or each `.jsonl` of a folder into the output
 * folder under the same name. Throws with the path when the input is neither.
 */
export function filePairs(input: string, output: string): { input: string; output: string }[] {
  const st = statSync(input, { throwIfNoEntry: false });
  if (!st) throw new Error(`${input} does not exist.`);
  if (st.isFile()) {
    const out = statSync(output, { throwIfNoEntry: false })?.isDirectory()
      ? join(output, basename(input))
      : output;
    return [{ input, output: out }];
  }
  const files = readdirSync(input)
    .filter((f) => f.endsWith(".jsonl"))
    .sort();
  if (files.length === 0) throw new Error(`${input} holds no .jsonl files.`);
  return files.map((f) => ({ input: join(input, f), output: join(output, f) }));
}

export async function compressFiles(options: {
  pairs: readonly { input: string; output: string }[];
  settings: CompressionSettings;
  workers: number;
  summarise: Summarise;
  onFile?: (report: FileReport) => void;
}): Promise<FileReport[]> {
  const limit = limiter(Math.max(1, options.workers));
  const reports: FileReport[] = [];
  for (const pair of options.pairs) {
    const text = await readFile(pair.input, "utf8");
    const lines = text.split("\n").filter((l) => l.trim());
    const report: FileReport = {
      input: pair.input,
      output: pair.output,
      entries: lines.length,
      compressed: 0,
      skipped_under_target: 0,
      still_over_limit: 0,
      unreadable: 0,
      summarization_errors: 0,
      tokens_before: 0,
      tokens_after: 0,
    };
    const out = await Promise.all(
      lines.map((line) =>
        limit(async () => {
          let entry: unknown;
          try {
            entry = JSON.parse(line);
          } catch {
            report.unreadable++;
            return line;
          }
          if (!isTrajectory(entry)) {
            report.unreadable++;
            return line;
          }
          try {
            const { entry: result, metrics } = await compressEntry(
              entry as { conversations: Turn[] } & Record<string, unknown>,
              options.settings,
              options.summarise,
            );
            report.tokens_before += metrics.original_tokens;
            report.tokens_after += metrics.compressed_tokens;
            if (metrics.was_compressed) report.compressed++;
            if (metrics.skipped_under_target) report.skipped_under_target++;
            if (metrics.still_over_limit) report.still_over_limit++;
            report.summarization_errors += metrics.summarization_errors;
            return result === entry ? line : JSON.stringify(result);
          } catch {
            report.unreadable++;
            return line;
          }
        }),
      ),
    );
    await mkdir(dirname(pair.output), { recursive: true });
    await atomicWriteFile(pair.output, out.map((l) => `${l}\n`).join(""), { mode: 0o600 });
    reports.push(report);
    options.onFile?.(report);
  }
  return reports;
}
