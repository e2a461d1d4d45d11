/**
 * mixture_of_agents: reference models answer a prompt in parallel, an aggregator model combines
 * their answers (Wang et al., "Mixture-of-Agents Enhances Large Language Model Capabilities").
 * Which models: moa-routes.ts. Each call goes through the auxiliary client (`auxiliary.ts`), so
 * provider keys, OAuth logins, the error classifier and the one retry on a retryable error are
 * the ones every side call uses.
 *
 * Bounds: every call carries `max_tokens` and its task's timeout (`auxiliary.moa_reference.timeout`
 * / `moa_aggregator.timeout`, 900 s as upstream); the tool's whole run stops with the turn's
 * interrupt; each reference answer is cut to {@link MAX_REFERENCE_CHARS} before the aggregator
 * reads it, so a model that ignores `max_tokens` cannot flood the aggregator's context. A failing
 * reference is reported in the result (`failed_models`) and the rest are aggregated; the call fails
 * only when no reference answers or the aggregator fails.
 */
import { Type } from "@sinclair/typebox";
import {
  type AuxiliaryInput,
  type AuxiliaryRuntime,
  auxiliaryComplete,
  resolveAuxiliaryRoute,
} from "../ai/auxiliary.js";
import { type ResolvedRuntime, resolveRuntime } from "../ai/resolve.js";
import type { Usage } from "../ai/types.js";
import type { HermesConfig } from "../config/defaults.js";
import { type Env, keyEnv } from "./key-env.js";
import description from "./moa.md";
import { type MoaPlan, type MoaRoute, readMoaPlan } from "./moa-routes.js";
import { defineTool } from "./types.js";

/** The most of one reference answer the aggregator reads. */
export const MAX_REFERENCE_CHARS = 24_000;

/** The aggregator's instructions (the MoA paper's aggregate-and-synthesize prompt, in our words). */
export const AGGREGATOR_SYSTEM_PROMPT =
  "You are given several answers to the user's latest question, written independently by different " +
  "models. Combine them into one answer of the highest quality. Judge them critically: some of what " +
  "they say may be wrong or biased. Do not just copy one of them; give a refined, accurate and " +
  "complete reply that is well organised and consistent.\n\nThe models' answers:";

const parameters = Type.Object({
  user_prompt: Type.String({
    minLength: 1,
    description:
      "The complex query or problem to solve using multiple AI models. Should be a challenging problem that benefits from diverse perspectives and collaborative reasoning.",
  }),
});

interface ResolvedPlan {
  plan: MoaPlan;
  references: { route: MoaRoute; runtime: AuxiliaryRuntime }[];
  skipped: { model: string; reason: string }[];
  aggregator: AuxiliaryRuntime | undefined;
}

/** The plan with each route resolved to a runtime; routes that cannot be used are `skipped`. */
export function resolveMoa(config: HermesConfig, env: Env, home: string | undefined): ResolvedPlan {
  const plan = readMoaPlan(config as unknown as Record<string, unknown>);
  let main: ResolvedRuntime;
  try {
    main = resolveRuntime({ flags: {}, config, env, home });
  } catch {
    // Without a main model, only routes that name their own provider can be used.
    main = { provider: "", model: "", baseUrl: "", apiKey: undefined, apiMode: "chat_completions" };
  }
  const input: AuxiliaryInput = { config, env, main, home };
  const references: ResolvedPlan["references"] = [];
  const skipped: ResolvedPlan["skipped"] = plan.problems.map((p) => ({ model: "?", reason: p }));
  for (const route of plan.references) {
    const runtime = safeRoute("moa_reference", route, input);
    if (runtime) references.push({ route, runtime });
    else skipped.push({ model: route.label, reason: unusableReason(route) });
  }
  return { plan, references, skipped, aggregator: safeRoute("moa_aggregator", plan.aggregator, input) };
}

function safeRoute(
  task: "moa_reference" | "moa_aggregator",
  route: MoaRoute,
  input: AuxiliaryInput,
): AuxiliaryRuntime | undefined {
  try {
    return resolveAuxiliaryRoute(task, route, input);
  } catch {
    return undefined;
  }
}

function unusableReason(route: MoaRoute): string {
  if (route.provider === "main") return "no main model is configured";
  return `provider ${route.provider ?? "(none)"} is not usable here (unknown, or its API key or login is missing)`;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** The aggregator's system prompt: the instructions, then each answer numbered and capped. */
export function aggregatorPrompt(answers: readonly string[]): string {
  const numbered = answers.map((text, i) => {
    const cut =
      text.length > MAX_REFERENCE_CHARS
        ? `${text.slice(0, MAX_REFERENCE_CHARS)}\n[... answer cut at ${MAX_REFERENCE_CHARS} characters]`
        : text;
    return `${i + 1}. ${cut}`;
  });
  return `${AGGREGATOR_SYSTEM_PROMPT}\n\n${numbered.join("\n\n")}`;
}

function addUsage(total: { input: number; output: number }, usage: Usage | undefined): void {
  if (!usage) return;
  total.input += usage.inputTokens;
  total.output += usage.outputTokens;
}

export const mixtureOfAgentsTool = defineTool({
  name: "mixture_of_agents",
  toolset: "moa",
  description,
  parameters,
  parallelSafe: true,
  emoji: "🧠",
  check(ctx) {
    const resolved = resolveMoa(ctx.config as unknown as HermesConfig, ctx.env, ctx.home);
    return resolved.aggregator !== undefined && resolved.references.length > 0;
  },
  async handler(args, ctx) {
    const started = Date.now();
    const env = keyEnv(ctx);
    const { plan, references, skipped, aggregator } = resolveMoa(
      ctx.config as unknown as HermesConfig,
      env,
      ctx.home,
    );
    if (references.length === 0) {
      throw new Error(
        `No reference model of the mixture can be used (${plan.source}): ${skipped.map((s) => `${s.model}: ${s.reason}`).join("; ") || "none is configured"}. Set auxiliary.moa_reference (provider and model, or models: [...]) or moa.presets in config.yaml.`,
      );
    }
    if (!aggregator) {
      throw new Error(
        `The aggregator model ${plan.aggregator.label} cannot be used (${unusableReason(plan.aggregator)}). Set auxiliary.moa_aggregator.provider and .model in config.yaml.`,
      );
    }
    const tokens = { input: 0, output: 0 };
    ctx.progress(`asking ${references.length} reference model${references.length === 1 ? "" : "s"}`);
    const settled = await Promise.allSettled(
      references.map(({ runtime }) =>
        auxiliaryComplete(runtime, [{ role: "user", content: args.user_prompt }], {
          signal: ctx.signal,
          maxTokens: plan.maxTokens,
          temperature: plan.referenceTemperature,
        }),
      ),
    );
    if (ctx.signal.aborted) throw new Error("Interrupted: the mixture of agents was stopped.");
    const answers: string[] = [];
    const answered: string[] = [];
    const failed: { model: string; error: string }[] = [];
    settled.forEach((outcome, i) => {
      const label = references[i]?.route.label ?? "?";
      if (outcome.status === "fulfilled") {
        answers.push(outcome.value.text);
        answered.push(label);
        addUsage(tokens, outcome.value.usage);
      } else {
        failed.push({ model: label, error: errorText(outcome.reason) });
      }
    });
    if (answers.length === 0) {
      throw new Error(
        `Every reference model failed, so there is nothing to aggregate: ${failed.map((f) => `${f.model}: ${f.error}`).join("; ")}. Answer with a single model instead.`,
      );
    }
    ctx.progress(`aggregating ${answers.length} answer${answers.length === 1 ? "" : "s"}`);
    let combined: Awaited<ReturnType<typeof auxiliaryComplete>>;
    try {
      combined = await auxiliaryComplete(
        aggregator,
        [
          { role: "system", content: aggregatorPrompt(answers) },
          { role: "user", content: args.user_prompt },
        ],
        { signal: ctx.signal, maxTokens: plan.maxTokens, temperature: plan.aggregatorTemperature },
      );
    } catch (error) {
      throw new Error(
        `The aggregator ${plan.aggregator.label} failed: ${errorText(error)}. The references that answered: ${answered.join(", ")}.`,
      );
    }
    addUsage(tokens, combined.usage);
    return {
      success: true,
      response: combined.text,
      models_used: { reference_models: answered, aggregator_model: plan.aggregator.label },
      ...(failed.length > 0 ? { failed_models: failed } : {}),
      ...(skipped.length > 0 ? { skipped_models: skipped } : {}),
      usage: { input_tokens: tokens.input, output_tokens: tokens.output },
      processing_time_s: Math.round((Date.now() - started) / 100) / 10,
    };
  },
});
