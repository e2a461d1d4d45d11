/**
 * The provider catalog, as data: where each provider lives, which environment variables hold its
 * key, and which wire protocol (`api_mode`) it speaks. Ids and variable names follow Python Hermes
 * so an existing `config.yaml` and `.env` keep their meaning.
 */
import type { OAuthProviderId } from "./oauth/types.js";
import type { ApiMode } from "./types.js";

export interface ProviderProfile {
  /** Canonical id, as written in `model.provider`. */
  readonly id: string;
  /** Human-readable name for pickers and messages. */
  readonly name: string;
  /** Other names accepted for `id` (matched case-insensitively). */
  readonly aliases: readonly string[];
  /** Default base URL; empty for `custom`, whose URL the user supplies. */
  readonly baseUrl: string;
  /** Base URL for an alias when it differs from `baseUrl` (the local-server aliases of `custom`). */
  readonly aliasBaseUrls?: Readonly<Record<string, string>>;
  /** Environment variables that override `baseUrl`, first non-empty wins. */
  readonly baseUrlEnv?: readonly string[];
  /** Environment variables holding the API key, first non-empty wins. */
  readonly apiKeyEnv: readonly string[];
  readonly apiMode: ApiMode;
  /** True when requests work without a key (local servers, AWS credential chain). */
  readonly keyOptional: boolean;
  /** Model used when the user names the provider but no model. */
  readonly defaultModel: string;
  /**
   * The OAuth login that can stand in for a key (`hermes auth add <id> --type oauth`): used when
   * no key variable is set. A provider with a login and no key variables works only through it.
   */
  readonly login?: OAuthProviderId;
  /**
   * The request header that carries the key as it is, instead of `Authorization: Bearer <key>`
   * (Azure AI Foundry's `api-key`). Every OpenAI-shaped request to the provider uses it: model
   * calls over either wire, the `/models` listing, the context-window probe.
   */
  readonly apiKeyHeader?: string;
}

/** The headers that present `apiKey` to an OpenAI-shaped endpoint: bearer, or the provider's own header. */
export function keyHeaders(apiKey: string | undefined, apiKeyHeader?: string): Record<string, string> {
  if (!apiKey) return {};
  return apiKeyHeader ? { [apiKeyHeader.toLowerCase()]: apiKey } : { authorization: `Bearer ${apiKey}` };
}

/** A plain OpenAI-compatible provider with a key variable and an optional base-URL variable. */
function keyed(
  id: string,
  name: string,
  baseUrl: string,
  apiKeyEnv: readonly string[],
  baseUrlEnv: string | undefined,
  defaultModel: string,
  extra: Partial<ProviderProfile> = {},
): ProviderProfile {
  return {
    id,
    name,
    aliases: [],
    baseUrl,
    ...(baseUrlEnv ? { baseUrlEnv: [baseUrlEnv] } : {}),
    apiKeyEnv,
    apiMode: "chat_completions",
    keyOptional: false,
    defaultModel,
    ...extra,
  };
}

export const PROVIDERS: readonly ProviderProfile[] = [
  {
    id: "openrouter",
    name: "OpenRouter",
    aliases: [],
    baseUrl: "https://openrouter.ai/api/v1",
    apiKeyEnv: ["OPENROUTER_API_KEY"],
    apiMode: "chat_completions",
    keyOptional: false,
    defaultModel: "anthropic/claude-sonnet-4",
  },
  {
    id: "nous",
    name: "Nous Portal",
    aliases: ["nous-portal"],
    baseUrl: "https://inference.nousresearch.com/v1",
    apiKeyEnv: ["NOUS_API_KEY"],
    apiMode: "chat_completions",
    keyOptional: false,
    defaultModel: "Hermes-4-405B",
    // The device-code login's state names its own inference host (see oauth/nous.ts).
    login: "nous",
  },
  {
    id: "openai-codex",
    name: "OpenAI Codex (ChatGPT sign-in)",
    aliases: ["codex", "chatgpt"],
    baseUrl: "https://chatgpt.com/backend-api/codex",
    baseUrlEnv: ["HERMES_CODEX_BASE_URL"],
    apiKeyEnv: [],
    apiMode: "codex_responses",
    keyOptional: false,
    defaultModel: "gpt-5-codex",
    login: "openai-codex",
  },
  {
    id: "openai-api",
    name: "OpenAI API",
    aliases: ["openai"],
    baseUrl: "https://api.openai.com/v1",
    baseUrlEnv: ["OPENAI_BASE_URL"],
    apiKeyEnv: ["OPENAI_API_KEY"],
    apiMode: "chat_completions",
    keyOptional: false,
    // A GPT-5 model here is spoken to over the Responses API (codex_responses; see api-mode.ts).
    defaultModel: "gpt-4.1",
  },
  {
    id: "anthropic",
    name: "Anthropic",
    aliases: ["claude"],
    baseUrl: "https://api.anthropic.com",
    // Upstream's override; the Claude login is sent there too, as the user named it.
    baseUrlEnv: ["ANTHROPIC_BASE_URL"],
    // Then Claude Code's credentials file (see config/claude-code.ts), read by resolveRuntime.
    apiKeyEnv: ["ANTHROPIC_API_KEY", "ANTHROPIC_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"],
    apiMode: "anthropic_messages",
    keyOptional: false,
    defaultModel: "claude-sonnet-4-5",
    // Claude Pro/Max through Hermes's own PKCE login (`.anthropic_oauth.json`).
    login: "anthropic",
  },
  {
    id: "copilot",
    name: "GitHub Copilot",
    aliases: ["github-copilot"],
    baseUrl: "https://api.githubcopilot.com",
    baseUrlEnv: ["COPILOT_API_BASE_URL"],
    // A GitHub token, exchanged for a short-lived Copilot token before use (oauth/copilot.ts).
    apiKeyEnv: ["COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"],
    apiMode: "chat_completions",
    keyOptional: false,
    defaultModel: "gpt-4.1",
    login: "copilot",
  },
  {
    id: "copilot-acp",
    name: "GitHub Copilot ACP (the copilot CLI)",
    aliases: ["copilot-cli"],
    // Not an HTTP endpoint: the `copilot` CLI in ACP mode, started as a child process
    // (transports/acp-provider.ts). It uses the CLI's own login; Hermes holds no key for it.
    baseUrl: "acp://copilot",
    baseUrlEnv: ["COPILOT_ACP_BASE_URL"],
    apiKeyEnv: [],
    apiMode: "chat_completions",
    keyOptional: true,
    // The CLI's session model; another id is selected in the session when the CLI offers it.
    defaultModel: "copilot-acp",
  },
  {
    id: "gemini",
    name: "Google Gemini",
    aliases: ["google"],
    // Gemini's OpenAI-compatible surface, so the chat_completions transport can talk to it.
    baseUrl: "https://generativelanguage.googleapis.com/v1beta/openai",
    apiKeyEnv: ["GOOGLE_API_KEY", "GEMINI_API_KEY"],
    apiMode: "chat_completions",
    keyOptional: false,
    defaultModel: "gemini-2.5-flash",
  },
  {
    id: "vertex",
    name: "Google Vertex AI",
    aliases: ["google-vertex", "vertex-ai", "gcp-vertex"],
    // The real base URL names the project and location (vertex.ts builds it at resolution).
    baseUrl: "https://aiplatform.googleapis.com",
    // No key: a service-account key file or gcloud's login yields short-lived tokens (oauth/google-auth.ts).
    apiKeyEnv: [],
    apiMode: "chat_completions",
    keyOptional: true,
    defaultModel: "google/gemini-2.5-flash",
  },
  {
    id: "deepseek",
    name: "DeepSeek",
    aliases: [],
    baseUrl: "https://api.deepseek.com/v1",
    apiKeyEnv: ["DEEPSEEK_API_KEY"],
    apiMode: "chat_completions",
    keyOptional: false,
    defaultModel: "deepseek-chat",
  },
  {
    id: "xai",
    name: "xAI (Grok)",
    aliases: ["grok"],
    baseUrl: "https://api.x.ai/v1",
    apiKeyEnv: ["XAI_API_KEY"],
    apiMode: "codex_responses",
    keyOptional: false,
    defaultModel: "grok-4",
  },
  {
    id: "xai-oauth",
    name: "xAI Grok OAuth (SuperGrok / Premium+)",
    aliases: ["grok-oauth", "x-ai-oauth", "xai-grok-oauth"],
    // The login's bearer goes only to xAI (HERMES_XAI_BASE_URL / XAI_BASE_URL are checked in oauth/xai.ts).
    baseUrl: "https://api.x.ai/v1",
    apiKeyEnv: [],
    apiMode: "codex_responses",
    keyOptional: false,
    defaultModel: "grok-4",
    login: "xai-oauth",
  },
  {
    id: "qwen-oauth",
    name: "Qwen OAuth",
    aliases: ["qwen-portal"],
    baseUrl: "https://portal.qwen.ai/v1",
    baseUrlEnv: ["HERMES_QWEN_BASE_URL"],
    apiKeyEnv: [],
    apiMode: "chat_completions",
    keyOptional: false,
    defaultModel: "qwen3-coder-plus",
    login: "qwen-oauth",
  },
  {
    id: "minimax-oauth",
    name: "MiniMax (OAuth)",
    aliases: [],
    // The login's state names its region's endpoint (see oauth/minimax.ts).
    baseUrl: "https://api.minimax.io/anthropic",
    apiKeyEnv: [],
    apiMode: "anthropic_messages",
    keyOptional: false,
    defaultModel: "MiniMax-M2",
    login: "minimax-oauth",
  },
  {
    id: "zai",
    name: "Z.AI (GLM)",
    aliases: ["glm", "z-ai"],
    baseUrl: "https://api.z.ai/api/paas/v4",
    apiKeyEnv: ["GLM_API_KEY", "ZAI_API_KEY", "Z_AI_API_KEY"],
    apiMode: "chat_completions",
    keyOptional: false,
    defaultModel: "glm-4.6",
  },
  {
    id: "kimi-coding",
    name: "Kimi (Moonshot)",
    aliases: ["kimi", "moonshot"],
    baseUrl: "https://api.moonshot.ai/v1",
    apiKeyEnv: ["KIMI_API_KEY", "KIMI_CODING_API_KEY"],
    apiMode: "chat_completions",
    keyOptional: false,
    defaultModel: "kimi-k2-0905-preview",
  },
  {
    id: "minimax",
    name: "MiniMax",
    aliases: [],
    baseUrl: "https://api.minimax.io/anthropic",
    apiKeyEnv: ["MINIMAX_API_KEY"],
    apiMode: "anthropic_messages",
    keyOptional: false,
    defaultModel: "MiniMax-M2",
  },
  {
    id: "huggingface",
    name: "Hugging Face Inference Providers",
    aliases: ["hf"],
    baseUrl: "https://router.huggingface.co/v1",
    apiKeyEnv: ["HF_TOKEN"],
    apiMode: "chat_completions",
    keyOptional: false,
    defaultModel: "openai/gpt-oss-120b",
  },
  {
    id: "nvidia",
    name: "NVIDIA NIM",
    aliases: ["nim"],
    baseUrl: "https://integrate.api.nvidia.com/v1",
    apiKeyEnv: ["NVIDIA_API_KEY"],
    apiMode: "chat_completions",
    keyOptional: false,
    defaultModel: "meta/llama-3.3-70b-instruct",
  },
  keyed(
    "kimi-coding-cn",
    "Kimi (Moonshot, China)",
    "https://api.moonshot.cn/v1",
    ["KIMI_CN_API_KEY"],
    undefined,
    "kimi-k2-0905-preview",
  ),
  {
    id: "minimax-cn",
    name: "MiniMax (China)",
    aliases: [],
    baseUrl: "https://api.minimaxi.com/anthropic",
    baseUrlEnv: ["MINIMAX_CN_BASE_URL"],
    apiKeyEnv: ["MINIMAX_CN_API_KEY"],
    apiMode: "anthropic_messages",
    keyOptional: false,
    defaultModel: "MiniMax-M2",
  },
  keyed(
    "alibaba",
    "Qwen Cloud (DashScope)",
    "https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
    ["DASHSCOPE_API_KEY"],
    "DASHSCOPE_BASE_URL",
    "qwen3-coder-plus",
    { aliases: ["dashscope"] },
  ),
  keyed(
    "alibaba-coding-plan",
    "Alibaba Cloud (Coding Plan)",
    "https://coding-intl.dashscope.aliyuncs.com/v1",
    ["ALIBABA_CODING_PLAN_API_KEY", "DASHSCOPE_API_KEY"],
    "ALIBABA_CODING_PLAN_BASE_URL",
    "qwen3-coder-plus",
  ),
  keyed(
    "ollama-cloud",
    "Ollama Cloud",
    "https://ollama.com/v1",
    ["OLLAMA_API_KEY"],
    "OLLAMA_BASE_URL",
    "gpt-oss:120b",
  ),
  keyed(
    "kilocode",
    "Kilo Code",
    "https://api.kilo.ai/api/gateway",
    ["KILOCODE_API_KEY"],
    "KILOCODE_BASE_URL",
    "anthropic/claude-sonnet-4",
  ),
  keyed(
    "xiaomi",
    "Xiaomi MiMo",
    "https://api.xiaomimimo.com/v1",
    ["XIAOMI_API_KEY"],
    "XIAOMI_BASE_URL",
    "mimo-v2-flash",
    { aliases: ["mimo"] },
  ),
  keyed(
    "arcee",
    "Arcee AI",
    "https://api.arcee.ai/api/v1",
    ["ARCEEAI_API_KEY"],
    "ARCEE_BASE_URL",
    "trinity-mini",
  ),
  keyed(
    "gmi",
    "GMI Cloud",
    "https://api.gmi-serving.com/v1",
    ["GMI_API_KEY"],
    "GMI_BASE_URL",
    "deepseek-ai/DeepSeek-V3.1",
  ),
  keyed(
    "novita",
    "Novita AI",
    "https://api.novita.ai/openai/v1",
    ["NOVITA_API_KEY"],
    "NOVITA_BASE_URL",
    "deepseek/deepseek-v3.1",
  ),
  keyed(
    "stepfun",
    "StepFun Step Plan",
    "https://api.stepfun.ai/step_plan/v1",
    ["STEPFUN_API_KEY"],
    "STEPFUN_BASE_URL",
    "step-3",
  ),
  keyed(
    "tencent-tokenhub",
    "Tencent TokenHub",
    "https://tokenhub.tencentmaas.com/v1",
    ["TOKENHUB_API_KEY"],
    "TOKENHUB_BASE_URL",
    "hunyuan-turbos-latest",
    { aliases: ["tencent", "tokenhub"] },
  ),
  keyed(
    "opencode-zen",
    "OpenCode Zen",
    "https://opencode.ai/zen/v1",
    ["OPENCODE_ZEN_API_KEY"],
    "OPENCODE_ZEN_BASE_URL",
    "qwen3-coder",
  ),
  keyed(
    "opencode-go",
    "OpenCode Go",
    "https://opencode.ai/zen/go/v1",
    ["OPENCODE_GO_API_KEY"],
    "OPENCODE_GO_BASE_URL",
    "deepseek-v4-flash",
  ),
  keyed(
    "ai-gateway",
    "Vercel AI Gateway",
    "https://ai-gateway.vercel.sh/v1",
    ["AI_GATEWAY_API_KEY"],
    "AI_GATEWAY_BASE_URL",
    "anthropic/claude-sonnet-4",
  ),
  {
    id: "azure-foundry",
    name: "Azure AI Foundry",
    aliases: ["azure", "azure-ai-foundry", "azure-ai"],
    // Each resource has its own endpoint, e.g. https://<resource>.openai.azure.com/openai/v1.
    baseUrl: "",
    baseUrlEnv: ["AZURE_FOUNDRY_BASE_URL"],
    apiKeyEnv: ["AZURE_FOUNDRY_API_KEY"],
    apiMode: "chat_completions",
    keyOptional: false,
    // The model name is the deployment's name on the resource.
    defaultModel: "gpt-4.1",
    apiKeyHeader: "api-key",
  },
  {
    id: "bedrock",
    name: "AWS Bedrock",
    aliases: ["aws-bedrock"],
    // The region belongs to the AWS configuration; the Bedrock transport will derive the real host.
    baseUrl: "https://bedrock-runtime.us-east-1.amazonaws.com",
    apiKeyEnv: [],
    apiMode: "bedrock_converse",
    keyOptional: true,
    defaultModel: "us.anthropic.claude-sonnet-4-20250514-v1:0",
  },
  {
    id: "lmstudio",
    name: "LM Studio",
    aliases: ["lm-studio"],
    baseUrl: "http://127.0.0.1:1234/v1",
    apiKeyEnv: ["LM_API_KEY"],
    apiMode: "chat_completions",
    keyOptional: true,
    defaultModel: "default",
  },
  {
    id: "custom",
    name: "Custom OpenAI-compatible endpoint",
    aliases: ["ollama", "vllm", "llamacpp", "llama.cpp"],
    baseUrl: "",
    aliasBaseUrls: {
      ollama: "http://127.0.0.1:11434/v1",
      vllm: "http://127.0.0.1:8000/v1",
      llamacpp: "http://127.0.0.1:8080/v1",
      "llama.cpp": "http://127.0.0.1:8080/v1",
    },
    baseUrlEnv: ["OPENAI_BASE_URL"],
    // Keys for a custom endpoint come from model.api_key, or OPENAI_API_KEY when paired with
    // OPENAI_BASE_URL (see resolve.ts); never from a hosted provider's variable.
    apiKeyEnv: [],
    apiMode: "chat_completions",
    keyOptional: true,
    defaultModel: "default",
  },
];

/** The profile whose id or alias is `idOrAlias` (case-insensitive), or undefined. */
export function findProvider(idOrAlias: string): ProviderProfile | undefined {
  const wanted = idOrAlias.trim().toLowerCase();
  if (wanted === "") return undefined;
  return PROVIDERS.find((p) => p.id === wanted || p.aliases.includes(wanted));
}

/**
 * The default base URL for a provider id or alias: an alias's own URL when it has one (`ollama`),
 * else the profile's. Empty string for `custom` and for unknown names.
 */
export function defaultBaseUrl(idOrAlias: string): string {
  const profile = findProvider(idOrAlias);
  if (!profile) return "";
  return profile.aliasBaseUrls?.[idOrAlias.trim().toLowerCase()] ?? profile.baseUrl;
}
