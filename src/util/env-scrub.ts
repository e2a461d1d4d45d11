/**
 * Environments for the processes Hermes starts. `scrubEnv` removes a fixed list of provider keys
 * and platform tokens (helper processes such as the transcriber); `terminalEnv` is the terminal's
 * rule: what Hermes loaded itself stays out, what the user's shell had stays in.
 */

const SECRET_NAME =
  /^(OPENROUTER|NOUS|OPENAI|ANTHROPIC|CLAUDE_CODE|GOOGLE|GEMINI|DEEPSEEK|XAI|GLM|ZAI|Z_AI|KIMI|KIMI_CODING|KIMI_CN|MINIMAX|MINIMAX_CN|DASHSCOPE|ALIBABA_CODING_PLAN|HF|NVIDIA|OLLAMA|KILOCODE|XIAOMI|ARCEEAI|GMI|NOVITA|STEPFUN|TOKENHUB|OPENCODE_ZEN|OPENCODE_GO|AZURE_FOUNDRY|LM|CUSTOM|COPILOT_GITHUB|FIRECRAWL|EXA|PARALLEL|TAVILY|BRAVE_SEARCH|BROWSERBASE|BROWSER_USE|FAL|KREA|ELEVENLABS|VOICE_TOOLS_OPENAI|GROQ|MISTRAL|HONCHO|SUPERMEMORY|DAYTONA|API_SERVER|WEBHOOK)_(API_KEY|KEY|TOKEN|SECRET|OAUTH_TOKEN)$|^(AZURE_CLIENT_SECRET|AZURE_CLIENT_CERTIFICATE_PASSWORD|AZURE_PASSWORD|IDENTITY_HEADER|MSI_SECRET|GOOGLE_APPLICATION_CREDENTIALS|VERTEX_CREDENTIALS_PATH|TELEGRAM_BOT_TOKEN|DISCORD_BOT_TOKEN|SLACK_BOT_TOKEN|SLACK_APP_TOKEN|SLACK_SIGNING_SECRET|HASS_TOKEN|MODAL_TOKEN_ID|MODAL_TOKEN_SECRET|ANTHROPIC_TOKEN)$/;

export function scrubEnv(
  env: Readonly<Record<string, string | undefined>>,
  passthrough: readonly string[] = [],
): Record<string, string | undefined> {
  const keep = new Set(passthrough);
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (SECRET_NAME.test(name) && !keep.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/**
 * Credentials Hermes itself signs in to its model with (Azure Entra ID's client secret, the
 * managed-identity header): withheld from the terminal wherever they came from, the user's shell
 * included, unless `terminal.env_passthrough` names them. A command has no use for them, and a
 * prompt-injected one could mint tokens with them.
 */
export const MODEL_CREDENTIAL_NAMES: readonly string[] = [
  "AZURE_CLIENT_SECRET",
  "AZURE_CLIENT_CERTIFICATE_PASSWORD",
  "AZURE_PASSWORD",
  "IDENTITY_HEADER",
  "MSI_SECRET",
];

/**
 * The terminal's environment: the session's environment without the secrets Hermes loaded itself.
 *
 * - Names in `withheld` (what Hermes put there: its `.env` entries, the home's tokens) are dropped
 *   unless `passthrough` (`terminal.env_passthrough`) names them.
 * - MODEL_CREDENTIAL_NAMES are dropped the same way, wherever they came from.
 * - Everything else is kept as it is, including keys the user exported in their own shell before
 *   starting hermes: the terminal inherits that shell, as any program started from it would. Their
 *   values are still redacted in whatever the commands print (util/redact.ts).
 *
 * `execute_code` (tools/sandbox/child-env.ts), MCP servers (tools/mcp/env.ts) and hooks apply their
 * own stricter filters on top. Pure.
 */
export function terminalEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: { withheld?: readonly string[]; passthrough?: readonly string[] } = {},
): Record<string, string | undefined> {
  const keep = new Set(options.passthrough ?? []);
  const withheld = new Set(
    [...(options.withheld ?? []), ...MODEL_CREDENTIAL_NAMES].filter((name) => !keep.has(name)),
  );
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || withheld.has(name)) continue;
    out[name] = value;
  }
  return out;
}
