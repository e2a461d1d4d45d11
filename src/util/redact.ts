/**
 * The one secret redactor. Every path out of the process (model requests, state.db, trajectories,
 * exports, logs, stdout/stderr, chat platforms, API responses) runs its text through a `Redactor`,
 * which replaces
 *
 * - the values of secrets the process knows (`addSecret`: provider keys, `.env` entries whose names
 *   look secret, credential-pool entries, platform tokens), also in their JSON-escaped and
 *   URL-encoded spellings, with `[REDACTED:<label>]`;
 * - well-known key shapes whoever they belong to (OpenAI, Anthropic, OpenRouter, GitHub, AWS, Slack,
 *   Google, Stripe, JWTs, PEM private keys, `Bearer` tokens, credentials in URLs and in `?password=`
 *   style query parameters).
 *
 * Everything compiles into one regular expression per secret set (escaped literals, longest first,
 * then the shapes), rebuilt only when a secret is added; text too short to hold any of them returns
 * at once. The marker contains no quote or backslash, so redacting inside JSON text keeps it valid.
 */

/** Known values shorter than this are never registered: `PORT=587` or `DEBUG=true` must not mangle text. */
export const MIN_SECRET_LENGTH = 8;

/** The marker for a known secret with `label`, or for a key shape. */
export function redactionMarker(label?: string): string {
  return label ? `[REDACTED:${label}]` : "[REDACTED]";
}

interface Shape {
  label: string;
  /** The pattern; a first capture group, when present, is a prefix that is kept (`Bearer `). */
  source: string;
}

// Not preceded by a character that would make the match the middle of a longer token (a base64
// run, a hash, an identifier): keeps random data from looking like a key.
const B = "(?<![A-Za-z0-9_\\-+/])";
// Not followed by another token character.
const E = "(?![A-Za-z0-9_\\-])";

/** The key shapes, most specific first (the first alternative that matches at a position wins). */
const SHAPES: readonly Shape[] = [
  {
    label: "PRIVATE_KEY",
    // A complete block; a block cut short (no END line) is redacted up to where its base64 stops.
    source:
      "-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:[\\s\\S]{0,16384}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|(?:[A-Za-z0-9+/=\\s]|\\\\[nr])*)",
  },
  { label: "ANTHROPIC_KEY", source: `${B}sk-ant-[A-Za-z0-9_\\-]{20,}` },
  { label: "OPENROUTER_KEY", source: `${B}sk-or-[A-Za-z0-9_\\-]{20,}` },
  {
    label: "OPENAI_KEY",
    source: `${B}sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_\\-]{0,200}[0-9])[A-Za-z0-9_\\-]{20,}`,
  },
  { label: "GITHUB_TOKEN", source: `${B}(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})${E}` },
  { label: "AWS_ACCESS_KEY_ID", source: `${B}(?:AKIA|ASIA)[A-Z0-9]{16}${E}` },
  {
    label: "AWS_SECRET_ACCESS_KEY",
    source: `((?:aws_?secret_?access_?key|AWS_SECRET_ACCESS_KEY)["']?\\s*[:=]\\s*["']?)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])`,
  },
  { label: "SLACK_TOKEN", source: `${B}(?:xox[abprs]-|xapp-)[A-Za-z0-9\\-]{10,}` },
  { label: "GOOGLE_API_KEY", source: `${B}AIza[0-9A-Za-z_\\-]{35}${E}` },
  { label: "STRIPE_KEY", source: `${B}[rs]k_live_[A-Za-z0-9]{20,}` },
  { label: "JWT", source: `${B}eyJ[A-Za-z0-9_\\-]{8,}\\.eyJ[A-Za-z0-9_\\-]{8,}\\.[A-Za-z0-9_\\-]{8,}` },
  { label: "BEARER_TOKEN", source: "((?<![A-Za-z])[Bb]earer\\s+)(?!\\[REDACTED)[A-Za-z0-9._~+/\\-]{16,}=*" },
  // `scheme://user:password@host`: the password goes, the user and host stay.
  {
    label: "URL_PASSWORD",
    // Anchored on the literal `://`, which the engine finds fast; the scheme itself is not needed.
    source: "(://[^\\s/:@\"'<>]{1,256}:)(?!\\[REDACTED)[^\\s/@\"'<>]{1,256}(?=@)",
  },
  {
    label: "QUERY_SECRET",
    source:
      "([?&](?:password|passwd|pwd|api_?key|api-key|access_token|auth_token|token|secret|client_secret)=)(?!\\[REDACTED)[^&\\s\"'#<>]+",
  },
];

/** Starts of the shapes, for holding back a token cut at the end of a stream chunk. */
export const SHAPE_STARTS: readonly string[] = [
  "sk-",
  "ghp_",
  "gho_",
  "ghu_",
  "ghs_",
  "ghr_",
  "github_pat_",
  "AKIA",
  "ASIA",
  "xoxa-",
  "xoxb-",
  "xoxp-",
  "xoxr-",
  "xoxs-",
  "xapp-",
  "AIza",
  "sk_live_",
  "rk_live_",
  "eyJ",
];

/** Whether each shape keeps its first group (a prefix such as `Bearer `). */
const KEEPS_PREFIX = SHAPES.map((shape) => countGroups(shape.source) > 0);

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The spellings under which `value` may appear in text: as is, JSON-escaped, URL-encoded. */
export function secretVariants(value: string): string[] {
  const variants = new Set([value]);
  variants.add(JSON.stringify(value).slice(1, -1));
  try {
    variants.add(encodeURIComponent(value));
  } catch {
    // A lone surrogate cannot be URL-encoded; the raw and JSON spellings still count.
  }
  return [...variants].filter((v) => v.length >= MIN_SECRET_LENGTH);
}

interface Compiled {
  regex: RegExp;
  /** Each alternative's first group index: literals (0 when absent), then one per shape. */
  literalGroup: number;
  shapeGroups: number[];
}

/** How many recent long texts a redactor remembers, and from what length (shorter ones scan fast). */
const RECENT_TEXTS = 8;
const RECENT_MIN_LENGTH = 64;

/**
 * Replaces known secrets and key shapes in text. Not thread-affine and cheap to share: the compiled
 * expression is rebuilt lazily after `addSecret` changed the set.
 */
export class Redactor {
  /** When false, `redact` returns its input (security.redact_secrets: false). */
  enabled = true;
  private readonly labels = new Map<string, string | undefined>();
  private compiled: Compiled | undefined;
  private generation = 0;
  private spellings: { version: number; list: readonly string[] } | undefined;
  /**
   * The last few long texts redacted and what they became, for this generation. A tool's result
   * is redacted where it enters the conversation, then again by the request's last guard and by
   * the store and log that write it: the same string each time, scanned once.
   */
  private recent: { version: number; texts: string[]; outs: string[]; next: number } = {
    version: -1,
    texts: [],
    outs: [],
    next: 0,
  };

  /** Increases whenever the secret set changes; caches of redacted values key on it. */
  get version(): number {
    return this.generation;
  }

  /** How many distinct spellings are registered (values times their variants). */
  get size(): number {
    return this.labels.size;
  }

  /**
   * Registers a known secret (and its JSON-escaped and URL-encoded spellings). Values shorter than
   * {@link MIN_SECRET_LENGTH} (after trimming) are ignored; returns whether anything was added.
   */
  addSecret(value: string | undefined | null, label?: string): boolean {
    if (typeof value !== "string") return false;
    const trimmed = value.trim();
    if (trimmed.length < MIN_SECRET_LENGTH) return false;
    let added = false;
    for (const candidate of new Set([value, trimmed])) {
      for (const variant of secretVariants(candidate)) {
        if (this.labels.has(variant)) continue;
        this.labels.set(variant, label);
        added = true;
      }
    }
    if (added) {
      this.generation++;
      this.compiled = undefined;
    }
    return added;
  }

  /** The registered spellings (for holding back a secret cut at the end of a stream chunk). */
  knownSpellings(): readonly string[] {
    if (this.spellings?.version !== this.generation)
      this.spellings = { version: this.generation, list: [...this.labels.keys()] };
    return this.spellings.list;
  }

  /** `text` with every known secret and key shape replaced by a marker; the same string when none. */
  redact(text: string): string {
    if (!this.enabled || text.length < MIN_SECRET_LENGTH) return text;
    const long = text.length >= RECENT_MIN_LENGTH;
    const recent = this.recent;
    if (long) {
      if (recent.version !== this.generation) {
        recent.version = this.generation;
        recent.texts.length = 0;
        recent.outs.length = 0;
        recent.next = 0;
      }
      for (let i = 0; i < recent.texts.length; i++)
        if (recent.texts[i] === text) return recent.outs[i] as string;
    }
    const compiled = this.compile();
    compiled.regex.lastIndex = 0;
    const out = text.replace(compiled.regex, (...args: unknown[]) => this.replacement(compiled, args));
    if (long) {
      recent.texts[recent.next] = text;
      recent.outs[recent.next] = out;
      recent.next = (recent.next + 1) % RECENT_TEXTS;
    }
    return out;
  }

  /**
   * A copy of a JSON-like value (objects, arrays, strings) with every string redacted; the same
   * object, untouched, when nothing changed. Inline images (`data:image/...`) are left alone.
   */
  redactDeep<T>(value: T): T {
    if (!this.enabled) return value;
    return redactJson(value, (text) => this.redact(text));
  }

  private replacement(compiled: Compiled, args: unknown[]): string {
    const match = args[0] as string;
    if (compiled.literalGroup > 0 && args[compiled.literalGroup] !== undefined) {
      return redactionMarker(this.labels.get(match));
    }
    for (let i = 0; i < SHAPES.length; i++) {
      const group = compiled.shapeGroups[i] as number;
      const whole = args[group];
      if (whole === undefined) continue;
      const shape = SHAPES[i] as Shape;
      const prefix = KEEPS_PREFIX[i] ? args[group + 1] : undefined;
      return `${typeof prefix === "string" ? prefix : ""}${redactionMarker(shape.label)}`;
    }
    return redactionMarker();
  }

  private compile(): Compiled {
    if (this.compiled) return this.compiled;
    const parts: string[] = [];
    let group = 1;
    let literalGroup = 0;
    if (this.labels.size > 0) {
      parts.push(`(${literalPattern([...this.labels.keys()])})`);
      literalGroup = group++;
    }
    const shapeGroups: number[] = [];
    for (let i = 0; i < SHAPES.length; i++) {
      const shape = SHAPES[i] as Shape;
      parts.push(`(${shape.source})`);
      shapeGroups.push(group);
      group += 1 + countGroups(shape.source);
    }
    this.compiled = { regex: new RegExp(parts.join("|"), "g"), literalGroup, shapeGroups };
    return this.compiled;
  }
}

interface TrieNode {
  children: Map<string, TrieNode>;
  end: boolean;
}

/**
 * One pattern matching any of `literals`, shaped as a trie (`ab(?:c|d(?:ef)?)`): the engine follows
 * one branch per position instead of trying every literal, which keeps a large secret set cheap.
 * Greedy optional tails make the longest literal win where one is a prefix of another.
 */
export function literalPattern(literals: readonly string[]): string {
  const root: TrieNode = { children: new Map(), end: false };
  for (const literal of literals) {
    let node = root;
    for (const char of literal) {
      let next = node.children.get(char);
      if (!next) {
        next = { children: new Map(), end: false };
        node.children.set(char, next);
      }
      node = next;
    }
    node.end = true;
  }
  const emit = (node: TrieNode): string => {
    const alternatives = [...node.children].map(([char, child]) => escapeRegExp(char) + emit(child));
    if (alternatives.length === 0) return "";
    const body = alternatives.length === 1 ? (alternatives[0] as string) : `(?:${alternatives.join("|")})`;
    return node.end ? `(?:${body})?` : body;
  };
  return emit(root);
}

/** Capturing groups in a pattern source (lookarounds and `(?:` are not counted). */
function countGroups(source: string): number {
  let n = 0;
  for (let i = 0; i < source.length; i++) {
    if (source[i] === "\\") {
      i++;
      continue;
    }
    if (source[i] === "(" && source[i + 1] !== "?") n++;
  }
  return n;
}

const DATA_IMAGE = /^data:image\/[a-z0-9.+-]+;base64,/i;

/**
 * Applies `redact` to every string inside a JSON-like value (plain objects and arrays; other values
 * are returned as they are). Returns `value` itself when no string changed. `data:image/…` strings
 * are skipped: they are large, and a key inside an image is not text anyone reads.
 */
export function redactJson<T>(value: T, redact: (text: string) => string): T {
  return walk(value, redact) as T;
}

function walk(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === "string") return DATA_IMAGE.test(value) ? value : redact(value);
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = walk(value[i], redact);
      if (next !== value[i]) {
        out ??= value.slice();
        out[i] = next;
      }
    }
    return out ?? value;
  }
  if (value !== null && typeof value === "object" && isPlain(value)) {
    let out: Record<string, unknown> | undefined;
    for (const [key, child] of Object.entries(value)) {
      const next = walk(child, redact);
      if (next !== child) {
        out ??= { ...(value as Record<string, unknown>) };
        out[key] = next;
      }
    }
    return out ?? value;
  }
  return value;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

// One instance per process, on purpose: every output path (the model request, state.db, the
// terminal's output, a chat reply, a log line) must see the same secret set, and those paths are
// reached from places (a stream write, a store opened by a subcommand) that share no context
// object. Surfaces register the secrets once at start (config/known-secrets.ts); code that wants
// its own set (tests) constructs a `Redactor` and passes it or its `redact` function explicitly.
let shared: Redactor | undefined;

/** The process-wide redactor (created on first use, enabled, holding only the key shapes). */
export function processRedactor(): Redactor {
  shared ??= new Redactor();
  return shared;
}

/** `processRedactor().redact`, as a plain function to hand to a logger or a store. */
export function redactText(text: string): string {
  return processRedactor().redact(text);
}
