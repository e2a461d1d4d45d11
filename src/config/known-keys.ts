/**
 * Top-level `config.yaml` keys Python Hermes knows (its DEFAULT_CONFIG sections, user-added
 * sections such as `mcp_servers`, and per-platform gateway sections). `hermes config check` warns
 * about anything else, since that is most often a typo the agent would silently ignore.
 */

export const KNOWN_TOP_LEVEL_KEYS: ReadonlySet<string> = new Set([
  "_config_version",
  // model and providers
  "model",
  "providers",
  "fallback_providers",
  "fallback_model",
  "credential_pool_strategies",
  "custom_providers",
  "model_aliases",
  "provider_routing",
  "openrouter",
  "bedrock",
  "vertex",
  "model_catalog",
  "auxiliary",
  "moa",
  // tools
  "toolsets",
  "platform_toolsets",
  "custom_toolsets",
  "tools",
  "mcp_servers",
  "web",
  "x_search",
  "browser",
  "terminal",
  "code_execution",
  "checkpoints",
  "worktree",
  "worktree_sync",
  "lsp",
  "computer_use",
  // agent behaviour
  "agent",
  "limits",
  "tool_loop_guardrails",
  "compression",
  "context",
  "prompt_caching",
  "delegation",
  "goals",
  "approvals",
  "command_allowlist",
  "hooks",
  "hooks_auto_accept",
  "security",
  "privacy",
  "secrets",
  "memory",
  "honcho",
  "skills",
  "curator",
  "prefill_messages_file",
  // per-model price overrides (USD per million tokens) for cost estimates
  "pricing",
  "timezone",
  // interface
  "display",
  "streaming",
  "tts",
  "stt",
  "voice",
  "human_delay",
  "quick_commands",
  "paste_collapse_threshold",
  "paste_collapse_char_threshold",
  "dashboard",
  "onboarding",
  "desktop",
  // sessions, gateway and platforms
  "max_concurrent_sessions",
  "max_live_sessions",
  "group_sessions_per_user",
  "thread_sessions_per_user",
  "session_reset",
  "unauthorized_dm_behavior",
  "sessions",
  "state",
  "gateway",
  "platform_hints",
  "telegram",
  "discord",
  "slack",
  "mattermost",
  "matrix",
  "whatsapp",
  "whatsapp_cloud",
  "signal",
  "email",
  "sms",
  "homeassistant",
  "feishu",
  "dingtalk",
  "wecom",
  "weixin",
  "bluebubbles",
  "qqbot",
  "teams",
  "line",
  "ntfy",
  "irc",
  "simplex",
  "google_chat",
  "webhook",
  "api_server",
  // operations
  "cron",
  "kanban",
  "plugins",
  "gateway_hooks",
  "logging",
  "updates",
  "network",
]);

export interface UnknownKey {
  key: string;
  /** A known key one or two edits away, when there is one. */
  suggestion?: string;
}

/** The top-level keys of a parsed config.yaml that Hermes does not know, with typo suggestions. */
export function unknownTopLevelKeys(keys: Iterable<string>): UnknownKey[] {
  const unknown: UnknownKey[] = [];
  for (const key of keys) {
    if (KNOWN_TOP_LEVEL_KEYS.has(key)) continue;
    const suggestion = closestName(key, KNOWN_TOP_LEVEL_KEYS);
    unknown.push(suggestion === undefined ? { key } : { key, suggestion });
  }
  return unknown;
}

/** The name in `candidates` one or two edits from `key` (case-insensitive), if any: a did-you-mean. */
export function closestName(key: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  // Short keys get one edit of slack, longer ones two, so `foo` is not "corrected" to `moa`.
  let bestDistance = key.length >= 6 ? 3 : 2;
  for (const known of candidates) {
    const distance = editDistance(key.toLowerCase(), known);
    if (distance < bestDistance) {
      best = known;
      bestDistance = distance;
    }
  }
  return best;
}

/** Optimal-string-alignment distance, so a swapped pair of letters (`agnet`) counts as one edit. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row: number[] = [];
    for (let j = 0; j <= b.length; j++) {
      if (i === 0 || j === 0) {
        row.push(i + j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(
        (rows[i - 1]?.[j] ?? 0) + 1,
        (row[j - 1] ?? 0) + 1,
        (rows[i - 1]?.[j - 1] ?? 0) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (rows[i - 2]?.[j - 2] ?? 0) + 1);
      }
      row.push(value);
    }
    rows.push(row);
  }
  return rows[a.length]?.[b.length] ?? Math.max(a.length, b.length);
}
