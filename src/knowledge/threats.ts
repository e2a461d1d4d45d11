/**
 * Prompt-injection and exfiltration patterns for text that ends up in the system prompt: project
 * context files, SOUL.md, memory entries and skills. Three cumulative scopes:
 *
 * - `base`: unambiguous attacks (override instructions, hide things from the user, send secrets
 *   out, invisible characters). Applies everywhere.
 * - `context`: adds identity hijack and command-and-control vocabulary, for files the agent reads
 *   but the user did not necessarily write (AGENTS.md from a cloned repo, installed skills).
 * - `strict`: adds persistence and secret-handling patterns, for content the agent itself writes
 *   (memory, skills it creates), where a refusal costs nothing and the model can rephrase.
 *
 * Patterns anchor on attack behaviour, never on merely bossy prose ("you must run the tests" is a
 * normal AGENTS.md line). Gaps between key words are bounded so a pathological input cannot make
 * a pattern backtrack for long, and scanning stops after 64 KiB.
 */

export type ThreatScope = "base" | "context" | "strict";

export interface ThreatFinding {
  /** Stable id, e.g. `ignore_instructions` or `invisible_unicode_U+200B`. */
  id: string;
  /** What was found, for people: "asks to ignore previous instructions". */
  description: string;
}

interface Pattern {
  id: string;
  scope: ThreatScope;
  re: RegExp;
  description: string;
}

export const MAX_SCAN_CHARS = 65_536;

/** Up to eight words between two anchors. */
const GAP = String.raw`(?:[\w'’-]+\s+){0,8}`;
/** An environment variable that names a secret. */
const SECRET_VAR = String.raw`\$\{?\w*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)\b`;
const SECRET_FILES = String.raw`(?:\.env\b|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|credentials(?:\.json)?\b|id_(?:rsa|ed25519|ecdsa)\b|auth\.json)`;

function p(id: string, scope: ThreatScope, source: string, description: string): Pattern {
  return { id, scope, re: new RegExp(source, "iu"), description };
}

const PATTERNS: readonly Pattern[] = [
  // base: instruction override and deception
  p(
    "ignore_instructions",
    "base",
    String.raw`\b(?:ignore|forget|override)\s+${GAP}(?:previous|prior|above|earlier|all|any|your)\s+${GAP}(?:instructions|directions|rules|prompts?)\b`,
    "asks to ignore previous instructions",
  ),
  p(
    "disregard_rules",
    "base",
    String.raw`\bdisregard\s+${GAP}(?:your|all|any|the)\s+${GAP}(?:instructions|rules|guidelines|guardrails)\b`,
    "asks to disregard the rules",
  ),
  p(
    "system_prompt_override",
    "base",
    String.raw`\b(?:new|override|replace)\s+(?:the\s+)?system\s+prompt\b`,
    "tries to replace the system prompt",
  ),
  p(
    "hide_from_user",
    "base",
    String.raw`\b(?:do\s+not|don't|never)\s+${GAP}(?:tell|inform|show|mention\s+(?:this\s+)?to)\s+${GAP}the\s+user\b`,
    "asks to hide something from the user",
  ),
  p(
    "no_restrictions",
    "base",
    String.raw`\b(?:act|behave|respond)\s+as\s+(?:if|though)\s+${GAP}(?:no|without)\s+${GAP}(?:restrictions|limits|rules|guidelines)\b`,
    "asks to act without restrictions",
  ),
  p(
    "hidden_html_comment",
    "base",
    String.raw`<!--[^>]{0,600}\b(?:ignore|instruction|system|secret|hidden|override|assistant)\b[^>]{0,600}-->`,
    "hides instructions in an HTML comment",
  ),
  p(
    "hidden_html_element",
    "base",
    String.raw`<\s*(?:div|span|p|section)\b[^>]{0,300}style\s*=\s*["'][^"'>]{0,300}(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0)`,
    "hides text in invisible HTML",
  ),
  // base: secrets leaving the machine
  p(
    "exfil_curl",
    "base",
    String.raw`\b(?:curl|wget|http|httpie|nc|ncat)\b[^\n]{0,400}${SECRET_VAR}`,
    "sends a secret variable over the network",
  ),
  p(
    "read_secret_files",
    "base",
    String.raw`\b(?:cat|less|more|head|tail|base64|xxd|type)\s+[^\n|;&]{0,200}${SECRET_FILES}`,
    "reads a credentials file",
  ),
  p(
    "pipe_secrets_out",
    "base",
    String.raw`${SECRET_FILES}[^\n]{0,200}\|\s*(?:curl|wget|nc|ncat)\b`,
    "pipes a credentials file to the network",
  ),

  // context: identity hijack and promptware
  p(
    "role_hijack",
    "context",
    String.raw`\byou\s+are\s+(?:now\s+(?:a|an|the|my)\s+\w+|no\s+longer\s+(?:bound|restricted|an?\s+(?:AI|assistant)))`,
    "tries to change the agent's identity",
  ),
  p(
    "pretend_to_be",
    "context",
    String.raw`\bpretend\s+${GAP}(?:you\s+are|to\s+be)\b`,
    "asks the agent to pretend to be someone else",
  ),
  p(
    "reveal_system_prompt",
    "context",
    String.raw`\b(?:print|output|reveal|repeat|show)\s+${GAP}(?:system|initial|hidden)\s+(?:prompt|instructions)\b`,
    "asks to reveal the system prompt",
  ),
  p(
    "fake_update",
    "context",
    String.raw`\byou\s+have\s+been\s+${GAP}(?:updated|upgraded|patched|reprogrammed)\b`,
    "claims the agent was reprogrammed",
  ),
  p(
    "c2_vocabulary",
    "context",
    String.raw`\b(?:c2\s+(?:server|channel|beacon)|command\s+and\s+control|beacon\s+(?:to|home)|register\s+as\s+a\s+node|pull\s+(?:new\s+)?tasking)\b`,
    "contains command-and-control instructions",
  ),
  p(
    "unset_agent_env",
    "context",
    String.raw`\bunset\s+\w*(?:HERMES|CLAUDE|CODEX|OPENAI|ANTHROPIC|AGENT)\w*`,
    "unsets the agent's environment",
  ),
  p(
    "anti_forensics",
    "context",
    String.raw`\b(?:only\s+use\s+one[\s-]?liners|never\s+${GAP}write\s+${GAP}(?:scripts?|files?)\s+to\s+disk|clear\s+(?:the\s+)?(?:bash\s+)?history)\b`,
    "asks to cover tracks",
  ),

  // strict: persistence, exfiltration of the conversation, secrets at rest
  p("ssh_persistence", "strict", String.raw`authorized_keys|(?:\$HOME|~)/\.ssh\b`, "touches SSH keys"),
  p(
    "hermes_secrets",
    "strict",
    String.raw`(?:\$HOME|~)/\.hermes/(?:\.env|auth\.json)`,
    "touches Hermes's secrets",
  ),
  p(
    "send_to_url",
    "strict",
    String.raw`\b(?:send|post|upload|transmit|forward)\s+[^\n]{0,200}\b(?:to|at)\s+https?://`,
    "sends data to a URL",
  ),
  p(
    "conversation_exfil",
    "strict",
    String.raw`\b(?:include|output|send|share|copy)\s+${GAP}(?:the\s+)?(?:conversation|chat\s+history|previous\s+messages|full\s+context|system\s+prompt)\b[^\n]{0,100}\b(?:to|into|in)\b`,
    "copies the conversation somewhere",
  ),
  p(
    "modify_agent_config",
    "strict",
    String.raw`\b(?:edit|modify|overwrite|append\s+to|write\s+to|change)\s+[^\n]{0,200}(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|SOUL\.md|\.hermes/config\.yaml)`,
    "changes the agent's own instructions",
  ),
  p(
    "hardcoded_secret",
    "strict",
    String.raw`\b(?:api[_-]?key|token|secret|password)\s*[=:]\s*["']?[A-Za-z0-9+/=_-]{24,}`,
    "contains what looks like a secret",
  ),
];

/** Zero-width and bidirectional control characters used to hide text from people. */
const INVISIBLE = /[\u200B-\u200D\u2060-\u2064\uFEFF\u202A-\u202E\u2066-\u2069]/gu;

const SCOPE_RANK: Record<ThreatScope, number> = { base: 0, context: 1, strict: 2 };

/** Every threat found in `text` for `scope` (which includes the narrower scopes). */
export function scanThreats(text: string, scope: ThreatScope = "context"): ThreatFinding[] {
  if (!text) return [];
  const sample = text.length > MAX_SCAN_CHARS ? text.slice(0, MAX_SCAN_CHARS) : text;
  const findings: ThreatFinding[] = [];
  const seen = new Set<string>();
  for (const match of sample.matchAll(INVISIBLE)) {
    const code = match[0].codePointAt(0) ?? 0;
    const id = `invisible_unicode_U+${code.toString(16).toUpperCase().padStart(4, "0")}`;
    if (!seen.has(id)) {
      seen.add(id);
      findings.push({ id, description: `contains an invisible character (U+${id.slice(-4)})` });
    }
  }
  // NFKC folds full-width and compatibility look-alikes (ｉｇｎｏｒｅ → ignore); invisible
  // characters are checked before it because normalisation can drop some of them.
  const normal = sample.replace(INVISIBLE, "").normalize("NFKC");
  const rank = SCOPE_RANK[scope];
  for (const pattern of PATTERNS) {
    if (SCOPE_RANK[pattern.scope] <= rank && pattern.re.test(normal)) {
      findings.push({ id: pattern.id, description: pattern.description });
    }
  }
  return findings;
}

/**
 * A refusal for content the agent is about to write (memory, skills), naming what was found, or
 * undefined when the content is clean.
 */
export function threatRefusal(text: string, scope: ThreatScope = "strict"): string | undefined {
  const findings = scanThreats(text, scope);
  if (findings.length === 0) return undefined;
  const what = findings.map((f) => `${f.description} (${f.id})`).join("; ");
  return (
    `Refused: the content ${what}. It would be loaded into future system prompts, so it must not carry ` +
    "instructions to the agent, hidden text or ways to move secrets. Rephrase it as a plain fact."
  );
}

/** Whether the text is longer than the scanner reads (callers treat that as suspicious). */
export function tooLargeToScan(text: string): boolean {
  return text.length > MAX_SCAN_CHARS;
}
