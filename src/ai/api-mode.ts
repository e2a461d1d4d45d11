/**
 * Which wire protocol to speak to an endpoint. Order: an explicit `model.api_mode`, then a
 * provider whose profile fixes a protocol other than chat completions, then hints in the base URL
 * and model name, then chat completions (what nearly every OpenAI-compatible server speaks).
 */
import { findProvider } from "./providers.js";
import type { ApiMode } from "./types.js";

export const API_MODES: readonly ApiMode[] = [
  "chat_completions",
  "codex_responses",
  "anthropic_messages",
  "bedrock_converse",
  "local",
];

export function isApiMode(value: string): value is ApiMode {
  return (API_MODES as readonly string[]).includes(value);
}

export interface ApiModeInput {
  provider?: string | undefined;
  baseUrl?: string | undefined;
  model?: string | undefined;
  /** `model.api_mode` from config; empty means "detect". */
  explicit?: string | undefined;
}

/**
 * Detects the api_mode. Throws when `explicit` is set but is not a known api_mode, naming the
 * accepted values. A provider profile saying `chat_completions` is treated as having no opinion,
 * so a custom endpoint pointed at `api.anthropic.com`, or `gpt-5` on the OpenAI API, still gets the
 * protocol its URL or model implies.
 */
export function detectApiMode(input: ApiModeInput): ApiMode {
  const explicit = input.explicit?.trim().toLowerCase() ?? "";
  if (explicit !== "" && explicit !== "auto") {
    if (isApiMode(explicit)) return explicit;
    throw new Error(
      `model.api_mode "${input.explicit}" is not a known api_mode.\n` +
        `Use one of: ${API_MODES.join(", ")}, or leave it empty to detect it.`,
    );
  }

  const profileMode = input.provider ? findProvider(input.provider)?.apiMode : undefined;
  if (profileMode && profileMode !== "chat_completions") return profileMode;

  return modeFromUrl(input.baseUrl, input.model) ?? "chat_completions";
}

function modeFromUrl(baseUrl: string | undefined, model: string | undefined): ApiMode | undefined {
  if (!baseUrl) return undefined;
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    return undefined;
  }
  const host = url.hostname.toLowerCase();
  const path = url.pathname.toLowerCase().replace(/\/+$/, "");

  if (host === "api.anthropic.com" || path.endsWith("/anthropic")) return "anthropic_messages";
  if (host.startsWith("bedrock-runtime.")) return "bedrock_converse";
  if (path.includes("/backend-api/codex")) return "codex_responses";
  if (host === "api.x.ai") return "codex_responses";
  if (host === "api.openai.com" && /^gpt-5/i.test(model?.trim() ?? "")) return "codex_responses";
  return undefined;
}
