/**
 * `hermes trajectories compress IN OUT --target-tokens N [--workers N]`: trajectories (a JSONL file,
 * or a folder of them) compressed into a token budget for training, the middle turns summarised by
 * the auxiliary model (`auxiliary.compression`, else the main model). Per-file savings on stdout.
 */
import type { Command } from "commander";
import { CliFailure, type ConfigContext, defineCommand } from "../command.js";

interface CompressFlags {
  targetTokens: string;
  workers: string;
  summaryTokens: string;
  keepLast: string;
  model?: string;
  provider?: string;
  baseUrl?: string;
  json?: boolean;
}

function wholeNumber(flag: string, value: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min)
    throw new CliFailure(`${flag} expects a whole number of at least ${min}, got "${value}".`, 2);
  return n;
}

export const trajectoriesCommand = defineCommand({
  name: "trajectories",
  description: "training-data trajectories (ShareGPT JSONL)",
  needs: "config",
  parse: (root: Command, action) => {
    root
      .command("compress")
      .description(
        "fit each trajectory into --target-tokens: keep the first turns and the last ones, summarise the middle with the auxiliary model (never splitting a tool call from its result)",
      )
      .argument("<in>", "a trajectories .jsonl file, or a folder of them")
      .argument("<out>", "the output file (or folder, for a folder input)")
      .requiredOption("--target-tokens <n>", "the most tokens a trajectory may keep")
      .option("--workers <n>", "summaries requested at the same time", "4")
      .option("--summary-tokens <n>", "the summary's target size in tokens", "750")
      .option("--keep-last <n>", "turns at the end kept as they are", "4")
      .option("-m, --model <model>", "main model (the auxiliary model falls back to it)")
      .option("--provider <provider>", "main provider")
      .option("--base-url <url>", "main OpenAI-compatible endpoint")
      .option("--json", "print the per-file reports as JSON")
      .action(
        action((ctx: ConfigContext, input: string, output: string, flags: CompressFlags) =>
          compress(ctx, input, output, flags),
        ),
      );
  },
});

async function compress(
  ctx: ConfigContext,
  input: string,
  output: string,
  flags: CompressFlags,
): Promise<number> {
  const { home, env, config, io } = ctx;
  const settings = {
    targetTokens: wholeNumber("--target-tokens", flags.targetTokens, 1),
    summaryTokens: wholeNumber("--summary-tokens", flags.summaryTokens, 1),
    keepLast: wholeNumber("--keep-last", flags.keepLast, 0),
  };
  const workers = wholeNumber("--workers", flags.workers, 1);
  const { compressFiles, filePairs } = await import("../../batch/compress/compressor.js");
  let pairs: { input: string; output: string }[];
  try {
    pairs = filePairs(input, output);
  } catch (error) {
    throw new CliFailure((error as Error).message, 2);
  }
  const { commandRuntime } = await import("./command-runtime.js");
  const main = await commandRuntime(
    { model: flags.model, provider: flags.provider, baseUrl: flags.baseUrl },
    { config, env, home },
  );
  const { auxiliaryComplete, resolveAuxiliaryChain } = await import("../../ai/auxiliary.js");
  const chain = resolveAuxiliaryChain("compression", { config, env, main, home });
  const summarise = async (prompt: string, maxTokens: number) =>
    (await auxiliaryComplete(chain, [{ role: "user", content: prompt }], { maxTokens, temperature: 0.3 }))
      .text;
  const reports = await compressFiles({
    pairs,
    settings,
    workers,
    summarise,
    onFile: (r) => {
      if (flags.json) return;
      const saved = r.tokens_before - r.tokens_after;
      const pct = r.tokens_before > 0 ? ((saved / r.tokens_before) * 100).toFixed(1) : "0.0";
      io.out(
        `${r.input} -> ${r.output}: ${r.entries} entries, ${r.compressed} compressed, ${r.skipped_under_target} already under target; tokens ${r.tokens_before} -> ${r.tokens_after} (saved ${saved}, ${pct}%)`,
      );
      if (r.still_over_limit > 0)
        io.err(
          `  ${r.still_over_limit} entr${r.still_over_limit === 1 ? "y is" : "ies are"} still over ${settings.targetTokens} tokens`,
        );
      if (r.summarization_errors > 0)
        io.err(
          `  ${r.summarization_errors} summar${r.summarization_errors === 1 ? "y" : "ies"} failed; their middle turns were replaced by a fixed note that the summary failed`,
        );
      if (r.unreadable > 0)
        io.err(`  ${r.unreadable} line(s) were not trajectories and were copied unchanged`);
    },
  });
  if (flags.json) io.out(JSON.stringify(reports, null, 2));
  return reports.some((r) => r.summarization_errors > 0) ? 1 : 0;
}
