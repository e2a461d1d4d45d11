/**
 * The words of `/model`, as upstream takes them: `[model] [--provider NAME] [--global|--session]
 * [--refresh]`. `--session` (the default) switches this conversation only; `--global` also saves
 * the choice to the home's config.yaml, for new sessions. Anything else is refused before anything
 * changes: a model id is one word, so `/model gpt 5` or an unknown `--flag` is a mistake to report.
 */
import { endpointExample, endpointVariable, needsEndpoint, normaliseEndpoint } from "../ai/endpoint.js";
import { findProvider } from "../ai/providers.js";
import { NoProviderError } from "../ai/resolve.js";
import { loadEnvFile, setEnvVar } from "../config/env-file.js";
import { setConfigValue } from "../config/write.js";
import type { CommandContext, Surface } from "./types.js";

export interface ModelArgs {
  /** What to switch to (`model`, `provider:model`, an alias); undefined shows the list. */
  spec?: string;
  global: boolean;
  refresh: boolean;
}

export function parseModelArgs(text: string): ModelArgs | { error: string } {
  const words = text.trim().split(/\s+/).filter(Boolean);
  const names: string[] = [];
  let provider: string | undefined;
  let global = false;
  let session = false;
  let refresh = false;
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (word === "--global" || word === "-g") global = true;
    else if (word === "--session") session = true;
    else if (word === "--refresh") refresh = true;
    else if (word === "--provider" || word.startsWith("--provider=")) {
      const value = word.includes("=") ? word.slice(word.indexOf("=") + 1) : words[++i];
      if (!value || value.startsWith("-"))
        return { error: "--provider needs a provider id, e.g. --provider openrouter." };
      provider = value;
    } else if (word.startsWith("-")) {
      return {
        error: `Unknown option ${word}; /model takes --provider NAME, --global, --session and --refresh.`,
      };
    } else names.push(word);
  }
  if (global && session)
    return { error: "Choose --global (save for new sessions) or --session (this one only), not both." };
  if (names.length > 1) {
    return { error: `A model id is one word; got "${names.join(" ")}". Nothing changed.` };
  }
  const [name] = names;
  if (name === undefined && provider === undefined) {
    if (global) return { error: "--global saves a model: /model NAME --global." };
    return { spec: undefined, global: false, refresh };
  }
  const spec = provider ? `${provider}:${name ?? ""}` : (name as string);
  return { spec, global, refresh };
}

/**
 * `--global`: writes the session's current model to `home`'s config.yaml; when it moved to another
 * provider, that provider and its endpoint too, and the old provider's `model.api_key` and
 * `model.api_mode` are cleared (a key is never sent to a provider it was not made for), as
 * `hermes model` does. Returns the keys written, as `key: value`.
 */
export function saveModelChoice(
  home: string,
  configured: { provider: string; base_url: string; api_key: string; api_mode: string },
  now: { model: string; provider: string; baseUrl?: string | undefined },
): string[] {
  const edits: Array<[string, string]> = [["model.default", now.model]];
  if (now.provider && now.provider !== configured.provider.trim()) {
    edits.push(["model.provider", now.provider]);
    // A catalog provider's endpoint comes from the catalog, a named one from custom_providers.
    edits.push(["model.base_url", now.provider === "custom" ? (now.baseUrl ?? "") : ""]);
    if (configured.api_key.trim()) edits.push(["model.api_key", ""]);
    if (configured.api_mode.trim()) edits.push(["model.api_mode", ""]);
  }
  return edits.map(([key, value]) => {
    setConfigValue(home, key, value);
    return `${key}: ${value === "" ? '""' : value}`;
  });
}

/**
 * `/model X` for a provider whose endpoint nobody configured (azure-foundry, a custom server):
 * the lines that say so and what to run, or undefined when `error` is about something else. A
 * slash command has no secret prompt for the key that usually comes with the endpoint, so the
 * user is sent to `hermes model` on a terminal, which asks for both and saves them.
 */
export function missingEndpointAdvice(error: unknown, spec: string, surface: Surface): string[] | undefined {
  if (!(error instanceof NoProviderError) || error.missing !== "base_url") return undefined;
  const profile = findProvider(error.provider ?? "");
  const id = profile?.id ?? error.provider ?? "custom";
  const variable = profile?.baseUrlEnv?.[0] ?? "OPENAI_BASE_URL";
  const example =
    id === "azure-foundry" ? "https://<resource>.openai.azure.com/openai/v1" : "http://127.0.0.1:8080/v1";
  const restart =
    surface === "repl" ? "then start hermes again" : "then restart the gateway (hermes gateway restart)";
  return [
    `${profile?.name ?? id} needs its endpoint, and none is configured; the model was not changed.`,
    id === "custom"
      ? `In a shell, run: hermes setup model (it asks for the server's address and makes it the default), ${restart}.`
      : `In a shell, run: hermes model ${spec} (it asks for the endpoint, and the key when none is set, and makes it the default), ${restart}.`,
    `Or add ${variable}=${example} to ~/.hermes/.env, ${restart}.`,
  ];
}

/**
 * The provider whose endpoint the REPL may ask for after `error` (azure-foundry: an address the
 * wizard asks for too), or undefined. A custom server keeps the advice: it is set up by `hermes
 * setup model`, which also asks for its key.
 */
export function askableEndpoint(error: unknown): string | undefined {
  if (!(error instanceof NoProviderError) || error.missing !== "base_url" || !error.provider)
    return undefined;
  return needsEndpoint(error.provider) ? error.provider : undefined;
}

/**
 * `/model provider:X` in the REPL with no endpoint configured: the address asked right there,
 * checked and normalised exactly as the setup wizard does (ai/endpoint.ts: https unless loopback,
 * Azure hosts to `/openai/v1`, a pasted request URL trimmed), asked again after a bad one, and kept
 * in the home's `.env` under the provider's variable (AZURE_FOUNDRY_BASE_URL) so later sessions
 * have it. An address saved there earlier in this session is used without asking. Resolves null
 * when the user cancels (Ctrl+C, or an empty answer).
 */
export async function askEndpointInRepl(
  ctx: Pick<CommandContext, "ask" | "reply" | "paint">,
  provider: string,
  home: string,
): Promise<string | null> {
  const name = findProvider(provider)?.name ?? provider;
  const variable = endpointVariable(provider);
  const saved = variable ? loadEnvFile(home, {}).env[variable]?.trim() : undefined;
  const savedCheck = saved ? normaliseEndpoint(provider, saved) : undefined;
  if (savedCheck?.ok) return savedCheck.url;
  let lines = [
    `${name} has no endpoint configured yet.`,
    ctx.paint.dim(`Its resource's endpoint, e.g. ${endpointExample(provider)} (empty or Ctrl+C: cancel)`),
  ];
  for (;;) {
    const answer = await ctx.ask(lines, `${name} endpoint: `);
    if (answer === null || answer.trim() === "") return null;
    const checked = normaliseEndpoint(provider, answer);
    if (!checked.ok) {
      lines = [ctx.paint.yellow(checked.message)];
      continue;
    }
    if (checked.note) ctx.reply(ctx.paint.dim(`Using ${checked.url} (${checked.note}).`));
    if (variable) {
      const path = setEnvVar(home, variable, checked.url);
      ctx.reply(ctx.paint.dim(`Saved ${variable} in ${path}.`));
    }
    return checked.url;
  }
}
