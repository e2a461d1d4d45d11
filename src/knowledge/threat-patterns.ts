/**
 * The injection scanner's pattern table, by family. Every pattern runs over normalised text (see
 * threats.ts: NFKC, homoglyphs folded, invisible characters removed, lower-cased), so a pattern is
 * written once in lower case and holds against full-width letters, Cyrillic look-alikes and
 * zero-width splits.
 *
 * Precision rules the patterns follow (context files come from cloned repositories and must load):
 * - Imperatives, not descriptions: "send the keys to" matches, "the client sends keys to" does not.
 * - A verb needs its dangerous object: "ignore the build/ folder", "send a PR", "print the logs" pass;
 *   "ignore all prior instructions", "send the API keys" do not.
 * - Negated advice passes: "never print API keys" is a normal AGENTS.md line.
 * - Words with ordinary meanings (heartbeat, beacon, developer mode, curl | sh in an install line)
 *   only count next to what makes them an attack (a controller to report to, an AI persona, a
 *   throw-away host); the wider forms live in the `strict` scope, used for text the agent writes.
 * Gaps between key words are bounded so no pattern backtracks for long.
 */

export type ThreatScope = "base" | "context" | "strict";

/** What kind of attack a finding belongs to; every finding names one. */
export type ThreatFamily =
  | "override"
  | "exfiltration"
  | "tampering"
  | "jailbreak"
  | "translate_execute"
  | "c2"
  | "download_execute"
  | "hidden"
  | "secret";

export interface ThreatPattern {
  id: string;
  family: ThreatFamily;
  scope: ThreatScope;
  re: RegExp;
  description: string;
}

/** Up to `n` words between two anchors. */
const gap = (n: number) => String.raw`(?:[\w'./-]+,?\s+){0,${n}}`;
const GAP = gap(8);
/**
 * Not advice against it ("never print", "don't ever send", "avoid posting") and not a description
 * ("this can leak passwords"): no negation or modal verb right before (one word may sit between).
 */
const NOT_NEGATED = String.raw`(?<!(?:\b(?:never|not|avoid|without|no|can|could|may|might|would|will|shall)|n't)\s+(?:[\w']+\s+)?)`;
/** An environment variable that names a secret. */
const SECRET_VAR = String.raw`\$\{?\w*(?:key|token|secret|password|passwd|credentials?)\b`;
const SECRET_FILES = String.raw`(?:\.env\b|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.git-credentials|credentials(?:\.json)?\b|id_(?:rsa|ed25519|ecdsa)\b|auth\.json)`;
/** What an exfiltration sends: secrets, the conversation, the prompt. */
const LOOT = String.raw`(?:(?:api|access|secret|private)[\s_-]?keys?|secrets?|credentials?|passwords?|(?:auth|access|bearer|api|github|oauth|session)[\s_-]?tokens?|\.env\b|env\s+file|(?:conversation|chat|message)\s+(?:history|log|transcript)|(?:the|this|our|entire|whole|full)\s+conversation|previous\s+messages|system\s+prompt|hidden\s+instructions|memory\s+files?|memories)\b(?!\s+(?:reset|manager|policy|hash|field|prompt|count|strength|rotation|docs?|documentation|page|section|team|store|scanning)\b)`;
/** What runs piped text as code: a shell, or an interpreter reading its program from stdin. */
const SHELL = String.raw`(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|(?:sudo\s+)?(?:python[0-9.]*|perl|ruby|node)(?:\s+-)?\s*(?:$|[\n;&|)'"\x60])|iex\b|invoke-expression\b`;
/** Hosts nobody installs software from: raw IPs, tunnels, paste and file drops, plain http. */
const THROWAWAY_URL = String.raw`(?:http://|https?://(?:\d{1,3}(?:\.\d{1,3}){3}|[^\s/]*(?:ngrok|trycloudflare|serveo|localtunnel|loca\.lt|pastebin|paste\.ee|hastebin|transfer\.sh|0x0\.st|termbin|ix\.io|webhook\.site|requestbin|pipedream|burpcollaborator|interact\.sh|oast\.)))`;

function p(
  id: string,
  family: ThreatFamily,
  scope: ThreatScope,
  source: string,
  description: string,
): ThreatPattern {
  return { id, family, scope, re: new RegExp(source, "u"), description };
}

const OVERRIDE_VERB = String.raw`(?:ignore|disregard|forget|override|bypass|abandon|set\s+aside)`;
const RULES_NOUN = `(?:instructions?|directions|directives|rules|prompts?|guidelines|guardrails|programming|constraints|restrictions|orders|context)`;

export const PATTERNS: readonly ThreatPattern[] = [
  // ── override: replace the agent's instructions or identity ─────────────────────────────────
  p(
    "ignore_instructions",
    "override",
    "base",
    String.raw`\b${OVERRIDE_VERB}\s+(?:(?:all|any|every|each)\s+(?:of\s+)?)?(?:(?:the|your|my|these|those)\s+)?(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system|developer|safety)\s+(?:[\w-]+\s+)?${RULES_NOUN}\b`,
    "asks to ignore previous instructions",
  ),
  p(
    "ignore_instructions",
    "override",
    "base",
    String.raw`\b${OVERRIDE_VERB}\s+(?:(?:all|any|every)\s+(?:of\s+)?(?:the\s+|your\s+)?(?:instructions|directives|guidelines|guardrails|programming)|(?:all\s+(?:of\s+)?)?your\s+(?:[\w-]+\s+)?(?:instructions|directives|guidelines|guardrails|programming|system\s+prompt|rules))\b`,
    "asks to ignore previous instructions",
  ),
  p(
    "disregard_rules",
    "override",
    "base",
    String.raw`\b${OVERRIDE_VERB}\s+(?:everything|anything|whatever|all(?:\s+of\s+(?:that|this|it))?)\s+(?:(?:that|which)\s+)?(?:(?:was|is|has\s+been|you\s+(?:were|have\s+been|are|'ve\s+been))\s+)?(?:(?:said|written|stated|told|given|mentioned)\s+)?(?:above|before\s+(?:this|now|here)|prior\s+to\s+this|previously|earlier|so\s+far|up\s+to\s+(?:here|now|this\s+point)|(?:that\s+)?came\s+before|you\s+(?:were|have\s+been)\s+told)\b`,
    "asks to disregard everything said before",
  ),
  p(
    "system_prompt_override",
    "override",
    "base",
    String.raw`\b(?:new|override|replace|overwrite|updated|real)\s+(?:the\s+|your\s+)?system\s+(?:prompt|message|instructions)\b|\bsystem\s+(?:prompt|instructions?|message)\s*(?:override|update|replacement)\b|\bsystem\s+override\b`,
    "tries to replace the system prompt",
  ),
  p(
    "new_instructions",
    "override",
    "base",
    String.raw`(?:^|[\n.!>\]])\s*(?:#+\s*)?(?:new|updated|real|actual|true|revised|secret|hidden|priority)\s+(?:system\s+)?instructions?\s*:`,
    "announces new instructions",
  ),
  p(
    "fake_role_tag",
    "override",
    "base",
    String.raw`<\|im_start\|>\s*(?:system|assistant|developer)|<\|(?:system|start_header_id|endoftext|im_end)\|>|(?:^|\n)[ \t>*#]*(?:\[\s*/?\s*system\s*\]|<\s*/?\s*system\s*>|\[/?inst\]|<</?sys>>|(?:system|developer)\s*(?:message|prompt)?\s*:\s*(?:you|ignore|disregard|from\s+now|new))`,
    "carries a fake system or chat-template tag",
  ),
  p(
    "hide_from_user",
    "override",
    "base",
    String.raw`\b(?:do\s+not|don't|never)\s+${GAP}(?:tell|inform|show|alert|notify|mention\s+(?:this\s+)?to)\s+${GAP}the\s+user\b`,
    "asks to hide something from the user",
  ),
  p(
    "role_hijack",
    "override",
    "context",
    String.raw`\byou\s+are\s+(?:now\s+(?:a|an|the|my|called|named|known\s+as)\s+\w+|now\s+(?:dan|evil|free)\b|no\s+longer\s+(?:bound|restricted|limited|an?\s+(?:ai|assistant)|hermes|claude|chatgpt))`,
    "tries to change the agent's identity",
  ),
  p(
    "pretend_to_be",
    "override",
    "context",
    String.raw`\bpretend\s+${GAP}(?:you\s+are|to\s+be)\b`,
    "asks the agent to pretend to be someone else",
  ),
  p(
    "fake_update",
    "override",
    "context",
    String.raw`\byou\s+have\s+been\s+${GAP}(?:updated|upgraded|patched|reprogrammed|unlocked|freed)\b`,
    "claims the agent was reprogrammed",
  ),

  // ── jailbreak: drop the safety rules ───────────────────────────────────────────────────────
  p(
    "no_restrictions",
    "jailbreak",
    "base",
    String.raw`\b(?:act|behave|respond|answer|reply|operate)\s+(?:as\s+(?:if|though)\s+${GAP})?(?:(?:with\s+)?no|without)\s+(?:any\s+)?(?:\w+\s+)?(?:restrictions|limits|rules|guidelines|filters?|censorship)\b`,
    "asks to act without restrictions",
  ),
  p(
    "without_safety",
    "jailbreak",
    "base",
    String.raw`\b(?:without\s+(?:any\s+|all\s+|your\s+|the\s+)*(?:safety|content|ethical|moral)|(?:disable|turn\s+off|remove|bypass|ignore)\s+(?:any\s+|all\s+|your\s+|the\s+)*(?:safety|ethical|moral))\s+(?:filters?|filtering|guidelines|guardrails|restrictions|censorship|moderation|policies|alignment|training)\b`,
    "asks to work without safety filters",
  ),
  p(
    "jailbreak_mode",
    "jailbreak",
    "base",
    String.raw`\b(?:you\s+are|you're|you\s+will\s+be)\s+(?:now\s+)?(?:jailbroken\b|(?:in|running\s+in|operating\s+in|entering)\s+(?:\w+\s+){0,2}(?:developer|jailbr\w*|dan|god|unrestricted|unfiltered|uncensored)\s+mode\b)|\b(?:enable|activate|enter|switch\s+to)\s+(?:\w+\s+){0,2}(?:jailbr\w*|dan|god|unrestricted|unfiltered|uncensored)\s+mode\b|\bdo\s+anything\s+now\b|\bjailbreak\s+(?:prompt|mode|yourself)\b`,
    "tries to jailbreak the agent",
  ),

  // ── exfiltration: secrets or the conversation leaving ──────────────────────────────────────
  p(
    "exfil_curl",
    "exfiltration",
    "base",
    String.raw`\b(?:curl|wget|http|httpie|nc|ncat)\b[^\n]{0,400}${SECRET_VAR}`,
    "sends a secret variable over the network",
  ),
  p(
    "curl_upload_file",
    "exfiltration",
    "base",
    String.raw`\b(?:curl\b[^\n|;]{0,300}(?:-d|--data(?:-binary|-raw|-urlencode)?|-f|--form|-t|--upload-file)[\s=]*['"]?(?:[\w-]+=)?@|wget\b[^\n|;]{0,300}--(?:post|body)-file[\s=]*['"]?)(?:~|/|\$home|\$\{home\}|\.\./|[^\s'"]*${SECRET_FILES}|[^\s'"]*\.hermes)`,
    "uploads a local file with curl or wget",
  ),
  p(
    "read_secret_files",
    "exfiltration",
    "base",
    String.raw`\b(?:cat|less|more|head|tail|base64|xxd|type|strings|bat)\s+(?:-\S+\s+)*['"]?[^\s|;&'"]{0,160}${SECRET_FILES}`,
    "reads a credentials file",
  ),
  p(
    "pipe_secrets_out",
    "exfiltration",
    "base",
    String.raw`${SECRET_FILES}[^\n]{0,200}\|\s*(?:curl|wget|nc|ncat)\b`,
    "pipes a credentials file to the network",
  ),
  p(
    "send_secrets",
    "exfiltration",
    "base",
    String.raw`\b${NOT_NEGATED}(?:send|post|upload|transmit|forward|exfiltrate|leak|email|paste)\s+${gap(4)}${LOOT}`,
    "asks to send secrets or the conversation somewhere",
  ),
  p(
    "reveal_secrets",
    "exfiltration",
    "base",
    String.raw`\b${NOT_NEGATED}(?:print|output|reveal|dump|display|echo|show|repeat|disclose|write\s+out|tell\s+me)\s+(?:(?:all|every|the|your|my|any|each|of|full|entire|whole|complete|raw)\s+)*(?:(?:api|secret|private|access)[\s_-]?keys?|secrets|credentials|passwords|(?:contents?\s+of\s+(?:the\s+)?)?(?:~/\.hermes/)?\.env(?:\s+file)?\b|(?:conversation|chat)\s+history|previous\s+messages|hidden\s+instructions)\b`,
    "asks to print secrets or the conversation",
  ),
  p(
    "reveal_system_prompt",
    "exfiltration",
    "context",
    String.raw`\b(?:print|output|reveal|repeat|show|dump|leak|disclose)\s+${GAP}(?:system|initial|hidden|original)\s+(?:prompt|instructions)\b`,
    "asks to reveal the system prompt",
  ),
  p(
    "markdown_image_beacon",
    "exfiltration",
    "base",
    String.raw`!\[[^\]\n]{0,200}\]\(\s*<?https?://[^)\s]{1,300}[?&][\w.-]+=[^)\s&]{0,200}(?:[{$<\[]|%7b|%24|\.\.\.|\u2026|history|conversation|secret|api[_-]?key|password|credential|memory|system[_-]?prompt)`,
    "builds an image link that carries data to a server",
  ),
  p(
    "send_to_url",
    "exfiltration",
    "strict",
    String.raw`\b(?:send|post|upload|transmit|forward)\s+[^\n]{0,200}\b(?:to|at)\s+https?://`,
    "sends data to a URL",
  ),
  p(
    "conversation_exfil",
    "exfiltration",
    "strict",
    String.raw`\b(?:include|output|send|share|copy)\s+${GAP}(?:the\s+)?(?:conversation|chat\s+history|previous\s+messages|full\s+context|system\s+prompt)\b[^\n]{0,100}\b(?:to|into|in)\b`,
    "copies the conversation somewhere",
  ),
  p(
    "hermes_secrets",
    "exfiltration",
    "strict",
    String.raw`(?:\$home|~)/\.hermes/(?:\.env|auth\.json)`,
    "touches Hermes's secrets",
  ),

  // ── tampering: rewrite the agent's own instructions, memory or config ──────────────────────
  p(
    "agent_home_edit",
    "tampering",
    "base",
    String.raw`\b(?:edit|modify|overwrite|append|add|write|change|update|rewrite|replace|insert|delete|remove|patch)\b[^\n]{0,120}(?:soul\.md|memory\.md|user\.md|(?:~|\$home)/\.hermes/|\.hermes/(?:config\.yaml|\.env|memories|soul))`,
    "asks to change the agent's own files (SOUL.md, memory, ~/.hermes)",
  ),
  p(
    "self_instruction_edit",
    "tampering",
    "base",
    String.raw`\b(?:edit|modify|change|update|rewrite|overwrite|alter|reprogram)\s+your\s+(?:own\s+)?(?:memory|memories|config|configuration|settings|instructions|system\s+prompt|soul|personality|rules|guidelines)\b|\b(?:add|append|insert|write|copy|save|store|persist|paste)\s+(?:this|these|the\s+following|the\s+above|the\s+text\s+below|it|them)(?:\s+\w+){0,2}\s+(?:to|into|in)\s+(?:your\s+(?:memory|memories|instructions|config)|(?:the\s+)?(?:agents|claude|gemini)\.md|\.cursorrules|(?:every|all|other)\s+(?:agents\.md|context\s+files?|repos(?:itories)?))\b`,
    "asks to write instructions into the agent's memory or context files",
  ),
  p(
    "disable_approvals",
    "tampering",
    "base",
    String.raw`\b(?:set|change|switch|turn|disable)\s+(?:the\s+)?(?:approvals?(?:\.mode)?|approval\s+mode|command\s+approval|redaction|security\.redact_secrets)\b[^\n]{0,40}\b(?:off|false|never|yolo|disabled?|none)\b`,
    "asks to turn off command approval or redaction",
  ),
  p(
    "modify_agent_config",
    "tampering",
    "strict",
    String.raw`\b(?:edit|modify|overwrite|append\s+to|write\s+to|change)\s+[^\n]{0,200}(?:agents\.md|claude\.md|\.cursorrules|soul\.md|\.hermes/config\.yaml)`,
    "changes the agent's own instructions",
  ),
  p(
    "ssh_persistence",
    "tampering",
    "strict",
    String.raw`authorized_keys|(?:\$home|~)/\.ssh\b`,
    "touches SSH keys",
  ),

  // ── translate_execute: hide the payload in another encoding or language ────────────────────
  p(
    "translate_execute",
    "translate_execute",
    "base",
    String.raw`(?<!\bfetch,?\s+(?:and\s+)?)(?:\b(?:translate|decode|decrypt|deobfuscate|unscramble|decipher|rot13)\s+${gap(6)}(?:and|then|,)\s+(?:then\s+)?(?:(?:immediately|silently|just)\s+)?(?:run|execute|exec|eval|follow|obey|perform|carry\s+out|act\s+on|do)\s+(?:it|them|this|that|the\s+(?:result|output|resulting|decoded|translated|decrypted|instructions|commands?|text|payload)|what\s+it\s+says|whatever\b)|\b(?:translate|decode|decrypt)\s+and\s+(?:then\s+)?(?:run|execute|eval|follow)\b)`,
    "asks to decode or translate text and then run it",
  ),
  p(
    "base64_pipe_shell",
    "translate_execute",
    "base",
    String.raw`\bbase64\s+(?:-d|--decode|-D)\b[^\n]{0,80}\|\s*(?:${SHELL})|\b(?:eval|exec)\s*\(\s*(?:atob|base64\.b64decode|buffer\.from)\s*\(|powershell[^\n]{0,40}\s-(?:e|enc|encodedcommand)\s+[a-z0-9+/=]{20,}`,
    "decodes a payload and runs it",
  ),

  // ── c2: reporting to and taking orders from a controller ───────────────────────────────────
  p(
    "c2_vocabulary",
    "c2",
    "context",
    String.raw`\b(?:c2\s+(?:server|channel|beacon|endpoint)|command[\s-]and[\s-]control|beacon\s+(?:back\s+)?(?:to|home)|register\s+as\s+a\s+(?:node|bot|agent|worker|implant)|pull\s+(?:new\s+)?tasking|await\s+(?:further\s+)?(?:orders|tasking))\b`,
    "contains command-and-control instructions",
  ),
  p(
    "c2_checkin",
    "c2",
    "context",
    String.raw`\b(?:check[\s-]?in|phone\s+home|call\s+home|ping\s+home|beacon)\s+(?:(?:with|to)\s+(?:\S+\s+){0,2})?(?:every|each)\s+\d+\s*(?:s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|days?)\b|\b(?:send|post|emit)\s+(?:a\s+|your\s+)?(?:heartbeat|beacon|check[\s-]?in)s?\s+(?:\w+\s+){0,3}(?:to|at)\s+(?:${THROWAWAY_URL}|(?:the\s+|my\s+|our\s+)?(?:c2|controller|operator|command\s+server|mothership))`,
    "asks to check in with a controller on a schedule",
  ),
  p(
    "c2_identity",
    "c2",
    "context",
    String.raw`\b(?:name|call|designate)\s+yourself\b|\bregister\s+(?:yourself|this\s+(?:agent|machine|host))\s+(?:with|at|to|as)\b|\b(?:poll|fetch|pull|download|await|receive|get)\s+(?:new\s+|further\s+|your\s+|next\s+)*(?:instructions|tasking|orders|commands)\s+from\s+(?:https?://|the\s+(?:c2|controller|operator|command\s+server)|my\s+server)`,
    "asks the agent to take a name or orders from a controller",
  ),
  p(
    "unset_agent_env",
    "hidden",
    "context",
    String.raw`\bunset\s+\w*(?:hermes|claude|codex|openai|anthropic|agent)\w*`,
    "unsets the agent's environment",
  ),
  p(
    "anti_forensics",
    "hidden",
    "context",
    String.raw`\b(?:only\s+use\s+one[\s-]?liners|never\s+${GAP}write\s+${GAP}(?:scripts?|files?)\s+to\s+disk|clear\s+(?:the\s+|your\s+)?(?:bash|shell|zsh|command|terminal)\s+history|history\s+-c\b|unset\s+histfile)`,
    "asks to cover tracks",
  ),

  // ── download_execute: fetch code and run it ────────────────────────────────────────────────
  p(
    "download_execute",
    "download_execute",
    "base",
    String.raw`\b(?:curl|wget|fetch|iwr|invoke-webrequest|irm|invoke-restmethod)\b[^\n|;]{0,200}${THROWAWAY_URL}[^\n|;]{0,200}\|\s*(?:${SHELL})|\b(?:ba|z)?sh\s+(?:-c\s+)?["']?\$\(\s*(?:curl|wget)\b[^\n)]{0,200}${THROWAWAY_URL}|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b[^\n)]{0,200}${THROWAWAY_URL}|\biex\s*\(?\s*\(?\s*new-object\s+net\.webclient\)?\.downloadstring|\bdownload\s+${gap(6)}(?:and|then)\s+(?:silently\s+)?(?:run|execute)\s+${gap(4)}(?:silently|in\s+the\s+background|without\s+(?:asking|telling))`,
    "downloads code from a throw-away host and runs it",
  ),
  p(
    "download_execute_any",
    "download_execute",
    "strict",
    String.raw`\b(?:curl|wget|fetch|iwr|irm)\b[^\n|;]{0,300}\|\s*(?:${SHELL})|\b(?:ba|z)?sh\s+(?:-c\s+)?["']?\$\(\s*(?:curl|wget)\b|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b|\bdownload\s+${gap(6)}(?:and|then)\s+(?:run|execute)\b`,
    "downloads code and runs it",
  ),

  // ── hidden: text people do not see ─────────────────────────────────────────────────────────
  p(
    "hidden_html_comment",
    "hidden",
    "base",
    String.raw`<!--[^>]{0,600}(?<![-\w])(?:ignore|instructions?|system|secret|hidden|override|assistant)(?![-\w])[^>]{0,600}-->`,
    "hides instructions in an HTML comment",
  ),
  p(
    "hidden_html_element",
    "hidden",
    "base",
    String.raw`<\s*(?:div|span|p|section)\b[^>]{0,300}style\s*=\s*["'][^"'>]{0,300}(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0)`,
    "hides text in invisible HTML",
  ),

  // ── secret: secrets at rest in what the agent writes ───────────────────────────────────────
  p(
    "hardcoded_secret",
    "secret",
    "strict",
    String.raw`\b(?:api[_-]?key|token|secret|password)\s*[=:]\s*["']?[a-z0-9+/=_-]{24,}`,
    "contains what looks like a secret",
  ),
];
