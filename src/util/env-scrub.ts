/**
 * Removes Hermes's own secrets (provider keys, platform tokens) from an environment before it is
 * handed to a shell the model drives. Names in `passthrough` are kept.
 */

const SECRET_NAME =
  /^(OPENROUTER|NOUS|OPENAI|ANTHROPIC|CLAUDE_CODE|GOOGLE|GEMINI|DEEPSEEK|XAI|GLM|ZAI|Z_AI|KIMI|KIMI_CODING|KIMI_CN|MINIMAX|MINIMAX_CN|DASHSCOPE|ALIBABA_CODING_PLAN|HF|NVIDIA|OLLAMA|KILOCODE|XIAOMI|ARCEEAI|GMI|NOVITA|STEPFUN|TOKENHUB|OPENCODE_ZEN|OPENCODE_GO|AZURE_FOUNDRY|LM|COPILOT_GITHUB|FIRECRAWL|EXA|PARALLEL|TAVILY|BRAVE_SEARCH|BROWSERBASE|BROWSER_USE|FAL|KREA|ELEVENLABS|VOICE_TOOLS_OPENAI|GROQ|MISTRAL|HONCHO|SUPERMEMORY|DAYTONA|API_SERVER|WEBHOOK)_(API_KEY|KEY|TOKEN|SECRET|OAUTH_TOKEN)$|^(TELEGRAM_BOT_TOKEN|DISCORD_BOT_TOKEN|SLACK_BOT_TOKEN|SLACK_APP_TOKEN|SLACK_SIGNING_SECRET|HASS_TOKEN|MODAL_TOKEN_ID|MODAL_TOKEN_SECRET|ANTHROPIC_TOKEN)$/;

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
