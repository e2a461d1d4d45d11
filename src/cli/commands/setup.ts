/**
 * `hermes setup [SECTION] [--non-interactive] [--reset] [--quick]`: the first-run wizard, re-runnable.
 * Sections (upstream's names): `model` (provider, key or local server, model from the provider's
 * own list, one tiny test request), `terminal`, `gateway`, `tools` (`platform_toolsets.cli`),
 * `agent`. Each section writes its answers when it is done; Ctrl+C leaves the rest untouched.
 */
import { existsSync, renameSync } from "node:fs";
import { ENTRA_DEFAULT_SCOPE, entraSettings } from "../../ai/oauth/entra-config.js";
import { defaultBaseUrl, findProvider } from "../../ai/providers.js";
import { configPath } from "../../config/home.js";
import { CliFailure, type ConfigContext, defineCommand, withConfig } from "../command.js";
import { testConnection } from "../setup/connection-test.js";
import {
  configuredEndpoint,
  endpointExample,
  endpointVariable,
  needsEndpoint,
  normaliseEndpoint,
} from "../setup/endpoint.js";
import {
  type AzureAuth,
  applyModelPlan,
  askModelPlan,
  automaticModelPlan,
  type ModelPlan,
  withAuth,
} from "../setup/model-flow.js";
import { PromptCancelled, type Prompter, terminalPrompter } from "../setup/prompter.js";
import {
  agentSection,
  applyEdits,
  gatewaySection,
  type SectionContext,
  type SectionEdits,
  terminalSection,
  toolsSection,
} from "../setup/sections.js";

export const SETUP_SECTIONS = ["model", "terminal", "gateway", "tools", "agent"] as const;
type Section = (typeof SETUP_SECTIONS)[number];

interface SetupFlags {
  nonInteractive?: boolean;
  reset?: boolean;
  quick?: boolean;
  provider?: string;
  model?: string;
  baseUrl?: string;
  authMode?: string;
}

export const setupCommand = defineCommand({
  name: "setup",
  description: "first-run and reconfigure wizard: provider, key, model, terminal, gateway, tools, agent",
  needs: "home",
  parse: (cmd) =>
    cmd
      .argument("[section]", `one section: ${SETUP_SECTIONS.join(" | ")} (default: all; --quick: model)`)
      .option(
        "--non-interactive",
        "ask nothing: provider, model and endpoint from the flags below, config.yaml or the environment; keys from the environment",
      )
      .option("--reset", "move config.yaml aside (config.yaml.bak-TIME) and start from the defaults")
      .option("--quick", "only what is needed to chat: the model section")
      .option(
        "--provider <id>",
        "with --non-interactive: the provider (azure-foundry, custom, openrouter, …)",
      )
      .option("-m, --model <id>", "with --non-interactive: the model (on Azure, the deployment's name)")
      .option("--base-url <url>", "with --non-interactive: the provider's endpoint (azure-foundry, custom)")
      .option(
        "--auth-mode <mode>",
        "with --non-interactive, azure-foundry: api_key or entra_id (model.auth_mode)",
      ),
  run: async (ctx, section: string | undefined, flags: SetupFlags) => {
    if (section !== undefined && !(SETUP_SECTIONS as readonly string[]).includes(section)) {
      throw new CliFailure(`unknown section "${section}"; use one of: ${SETUP_SECTIONS.join(", ")}.`, 2);
    }
    if (flags.reset) {
      const file = configPath(ctx.home);
      if (existsSync(file)) {
        const stamp = new Date(ctx.io.now() * 1000).toISOString().replace(/[:.]/g, "-");
        const aside = `${file}.bak-${stamp}`;
        renameSync(file, aside);
        ctx.io.err(`config.yaml moved to ${aside}; starting from the defaults (.env and keys are kept).`);
      }
    }
    const sections: Section[] = section
      ? [section as Section]
      : flags.quick || flags.nonInteractive
        ? ["model"]
        : [...SETUP_SECTIONS];
    const wanted = {
      ...(flags.provider ? { provider: flags.provider } : {}),
      ...(flags.model ? { model: flags.model } : {}),
      ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    };
    if (flags.nonInteractive) return nonInteractive(withConfig(ctx), sections, wanted, flags.authMode);
    if (flags.authMode !== undefined) throw new CliFailure("--auth-mode goes with --non-interactive.", 2);
    if (Object.keys(wanted).length > 0) {
      throw new CliFailure(
        "--provider, --model and --base-url go with --non-interactive; on a terminal the wizard asks for them.",
        2,
      );
    }
    if (ctx.io.stdin.isTTY !== true) {
      throw new CliFailure(
        "stdin is not a terminal, so there is nobody to ask. Use hermes setup --non-interactive " +
          "(provider and key from config.yaml or the environment), or hermes config set.",
        2,
      );
    }
    const prompter = terminalPrompter(ctx.io);
    try {
      return await interactive(ctx, prompter, sections);
    } catch (error) {
      if (error instanceof PromptCancelled) {
        ctx.io.err("\nSetup left; the sections already finished are saved, nothing else was changed.");
        return 1;
      }
      throw error;
    } finally {
      prompter.close();
    }
  },
});

async function interactive(
  base: Parameters<typeof withConfig>[0],
  p: Prompter,
  sections: readonly Section[],
): Promise<number> {
  p.say("Hermes setup. Enter keeps the value in [brackets]; Ctrl+C leaves (finished sections stay saved).");
  let failed = false;
  for (const section of sections) {
    // Reloaded per section: an earlier section's answers are the next one's defaults.
    const ctx = withConfig(base);
    p.say("");
    p.say(`── ${section} ──`);
    if (section === "model") {
      const plan = await askModelPlan(ctx, p);
      if (!(await tryPlan(p, plan))) {
        const keep = await p.confirm("Save this choice anyway?", false);
        if (!keep) {
          failed = true;
          p.say("Model not saved; run hermes setup model again.");
          continue;
        }
      }
      for (const line of applyModelPlan(ctx.home, ctx.config, plan)) p.say(`  saved ${line}`);
      continue;
    }
    const edits = await sectionEdits(section, { config: ctx.config, env: ctx.env }, p);
    for (const line of applyEdits(ctx.home, edits)) p.say(`  saved ${line}`);
  }
  p.say("");
  p.say(
    failed
      ? "Setup finished with the model unsaved."
      : "Setup done. Start chatting: hermes   (check everything: hermes doctor)",
  );
  return failed ? 1 : 0;
}

function sectionEdits(
  section: Exclude<Section, "model">,
  ctx: SectionContext,
  p: Prompter,
): Promise<SectionEdits> {
  switch (section) {
    case "terminal":
      return terminalSection(ctx, p);
    case "gateway":
      return gatewaySection(ctx, p);
    case "tools":
      return toolsSection(ctx, p);
    case "agent":
      return agentSection(ctx, p);
  }
}

/** The connection test, said as it happens; true when the model answered. */
async function tryPlan(p: Pick<Prompter, "say" | "signal">, plan: ModelPlan): Promise<boolean> {
  p.say(`Testing ${plan.runtime.provider}:${plan.model} at ${plan.runtime.baseUrl} with one tiny request…`);
  const result = await testConnection(plan.runtime, {
    ...(p.signal ? { signal: p.signal } : {}),
    transport: {
      ...(plan.region ? { bedrock: { region: plan.region } } : {}),
      ...(plan.env ? { env: plan.env } : {}),
    },
  });
  // Ctrl+C while the request was out: the section is left unfinished, so nothing of it is saved.
  if (p.signal?.aborted) throw new PromptCancelled();
  if (result.ok) {
    p.say(
      `✓ ${plan.model} answered in ${result.ms} ms${result.reply ? `: "${result.reply.slice(0, 60)}"` : ""}`,
    );
    return true;
  }
  p.say(`✗ ${result.message}`);
  return false;
}

/** config.yaml's model section as the Entra reader takes it, with auth_mode on to read the scope. */
function entraModel(config: ConfigContext["config"]): Record<string, unknown> {
  return { ...(config.model as unknown as Record<string, unknown>), auth_mode: "entra_id" };
}

/** `--non-interactive`: the model section from config.yaml and the environment; nothing asked. */
async function nonInteractive(
  ctx: ConfigContext,
  sections: readonly Section[],
  wanted: { provider?: string; model?: string; baseUrl?: string },
  authMode?: string,
): Promise<number> {
  const others = sections.filter((s) => s !== "model");
  let auth: AzureAuth | undefined;
  if (authMode !== undefined) {
    const mode = authMode.trim().toLowerCase();
    if (mode !== "api_key" && mode !== "entra_id") {
      throw new CliFailure(`--auth-mode takes api_key or entra_id, not "${authMode}".`, 2);
    }
    auth =
      mode === "entra_id"
        ? { mode, scope: entraSettings(entraModel(ctx.config))?.scope ?? ENTRA_DEFAULT_SCOPE }
        : { mode };
    ctx = { ...ctx, config: withAuth(ctx.config, auth) };
  }
  if (others.length > 0) {
    throw new CliFailure(
      `--non-interactive sets up the model only; set ${others.join(", ")} with hermes config set (see hermes config show).`,
      2,
    );
  }
  let plan: ModelPlan;
  try {
    plan = await automaticModelPlan(ctx, requireEndpoint(ctx, wanted), ctx.io.env);
    if (auth && plan.provider !== "azure-foundry") {
      throw new CliFailure(`--auth-mode is for azure-foundry; ${plan.provider} signs in its own way.`, 2);
    }
    if (auth) plan = { ...plan, auth, ...(auth.mode === "entra_id" ? { env: ctx.env } : {}) };
  } catch (error) {
    if (error instanceof CliFailure && error.message.startsWith("No model provider")) {
      throw new CliFailure(
        "nothing names a provider to set up. Pass --provider ID, or set its key (OPENROUTER_API_KEY, ANTHROPIC_API_KEY, …) or a " +
          "local server's address (OPENAI_BASE_URL, optionally HERMES_INFERENCE_MODEL) in the environment, " +
          "or run hermes setup on a terminal.",
        2,
      );
    }
    throw error;
  }
  const say = { say: (line: string) => ctx.io.err(line) };
  if (!(await tryPlan(say, plan))) {
    ctx.io.err(
      "Nothing saved. Fix the provider (key, address, model) and run hermes setup --non-interactive again.",
    );
    return 1;
  }
  for (const line of applyModelPlan(ctx.home, ctx.config, plan)) ctx.io.err(`saved ${line}`);
  ctx.io.out(`${plan.provider}:${plan.model}`);
  return 0;
}

/**
 * `--non-interactive` for a provider with no address of its own (azure-foundry, custom): the
 * endpoint comes from --base-url, config.yaml or the provider's variable; missing, the message
 * names each. A key is checked by the resolver, whose message names the variable.
 */
function requireEndpoint<W extends { provider?: string; baseUrl?: string }>(
  ctx: ConfigContext,
  wanted: W,
): W {
  const provider = wanted.provider ?? ctx.config.model.provider.trim();
  if (wanted.baseUrl) {
    const checked = normaliseEndpoint(provider || "custom", wanted.baseUrl);
    if (!checked.ok) throw new CliFailure(`--base-url: ${checked.message}`, 2);
    if (checked.note) ctx.io.err(`Using ${checked.url} (${checked.note}).`);
    return { ...wanted, baseUrl: checked.url };
  }
  const profile = provider ? findProvider(provider) : undefined;
  if (!profile) return wanted;
  if (needsEndpoint(provider)) {
    if (configuredEndpoint(provider, ctx.config, ctx.env)) return wanted;
    const variable = endpointVariable(provider);
    throw new CliFailure(
      `${profile.id} needs its endpoint, and none is given: pass --base-url URL` +
        `${variable ? ` or set ${variable}` : ""}, e.g. ${endpointExample(provider)}.`,
      2,
    );
  }
  const isCustom = profile.id === "custom" && !provider.toLowerCase().startsWith("custom:");
  if (isCustom && defaultBaseUrl(provider) === "") {
    const sameAsConfig =
      ctx.config.model.provider.trim() !== "" && findProvider(ctx.config.model.provider) === profile;
    if ((sameAsConfig && ctx.config.model.base_url.trim()) || ctx.env["OPENAI_BASE_URL"]?.trim())
      return wanted;
    throw new CliFailure(
      "custom needs the server's address, and none is given: pass --base-url URL or set OPENAI_BASE_URL, " +
        `e.g. ${endpointExample("custom")}.`,
      2,
    );
  }
  return wanted;
}
