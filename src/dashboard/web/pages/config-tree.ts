/** The Config page's view of `GET /api/config`, and the settings flattened into sections of rows. */

export interface ConfigAnswer {
  path: string;
  exists: boolean;
  warnings: string[];
  config: Record<string, unknown>;
  defaults: Record<string, unknown>;
  user_keys: string[];
  env_keys: string[];
  choices: Record<string, string[]>;
  raw: string | null;
  raw_error?: string;
  env_file: { path: string; exists: boolean; names: Array<{ name: string; overridden: boolean }> };
  not_editable: { sections: string[]; env: string };
}

export interface SettingRow {
  /** Dotted key: `agent.max_turns`. */
  key: string;
  value: unknown;
  /** The built-in default; undefined when Hermes has none. */
  fallback: unknown;
  /** The value differs from the default. */
  changed: boolean;
  /** config.yaml sets it. */
  inFile: boolean;
  /** An environment variable supplied it. */
  fromEnv: boolean;
}

export interface Section {
  name: string;
  rows: SettingRow[];
}

/** Sections people look for first; the rest follow alphabetically, `general` (top-level values) last. */
const FIRST = [
  "model",
  "agent",
  "terminal",
  "toolsets",
  "tools",
  "memory",
  "skills",
  "gateway",
  "tts",
  "stt",
];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Deep equality of JSON values. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && sameValue(a[k], b[k]))
    );
  }
  return false;
}

function at(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const segment of path) {
    if (!isPlainObject(node) || !Object.hasOwn(node, segment)) return undefined;
    node = node[segment];
  }
  return node;
}

/** Leaves of a config tree: scalars, lists and empty mappings, with their dotted keys. */
export function leaves(tree: unknown, prefix: string[] = []): Array<[string[], unknown]> {
  if (isPlainObject(tree) && (Object.keys(tree).length > 0 || prefix.length === 0)) {
    return Object.entries(tree).flatMap(([key, value]) => leaves(value, [...prefix, key]));
  }
  return [[prefix, tree]];
}

/** The settings as sections of rows, each row marked changed / in the file / from the environment. */
export function sectionsOf(answer: ConfigAnswer): Section[] {
  const inFile = new Set(answer.user_keys);
  const fromEnv = new Set(answer.env_keys);
  const bySection = new Map<string, SettingRow[]>();
  for (const [path, value] of leaves(answer.config)) {
    const key = path.join(".");
    const fallback = at(answer.defaults, path);
    const section = path.length > 1 ? (path[0] ?? "general") : "general";
    const row: SettingRow = {
      key,
      value,
      fallback,
      changed: !sameValue(value, fallback),
      inFile: inFile.has(key),
      fromEnv: fromEnv.has(key),
    };
    const rows = bySection.get(section) ?? [];
    rows.push(row);
    bySection.set(section, rows);
  }
  const rank = (name: string) => {
    const i = FIRST.indexOf(name);
    return name === "general" ? 1000 : i >= 0 ? i : 100;
  };
  return [...bySection.entries()]
    .map(([name, rows]) => ({ name, rows }))
    .sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
}

/** A value as one line: strings bare, everything else as JSON; `null` as "–". */
export function showValue(value: unknown): string {
  if (value === undefined || value === null) return "–";
  if (typeof value === "string") return value === "" ? '""' : value;
  return JSON.stringify(value);
}

/** A value as `hermes config set KEY VALUE` takes it (lists and mappings as JSON). */
export function editText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

const SECRET_NAME =
  /(?:^|_)(?:api_?key|key|token|secret|client_secret|password|passwd|password_hash|credentials?|private_key|access_key|authorization)$/;
const NOT_SECRET = new Set(["record_key", "ssh_key", "session_key", "sort_key", "primary_key", "hot_key"]);

/**
 * Whether a setting holds a secret: its value arrived masked (`sk-o****`), or its name is one the
 * server masks (the rule of config/secrets.ts), so an empty `api_key` is still typed as hidden.
 */
export function isSecretSetting(key: string, value: unknown): boolean {
  if (typeof value === "string" && value.endsWith("****")) return true;
  const name = (key.split(".").pop() ?? "").toLowerCase().replaceAll("-", "_");
  return !NOT_SECRET.has(name) && (SECRET_NAME.test(name) || name.endsWith("_key"));
}
