/**
 * Type rules for config values, shared by the `config.yaml` reader, `hermes config set` and the
 * environment layer. The type of a key is the type of its built-in default.
 *
 * Decisions (strict where a mistake is likely, lenient where only the spelling differs):
 * - number keys accept numbers and numeric strings (`"90"`, which PyYAML users sometimes quote and
 *   which `${VAR}` substitution always produces); anything else is an error.
 * - boolean keys accept booleans and the strings true/false, yes/no, on/off, 1/0 in any case.
 * - string keys accept any scalar and keep the text the user wrote: `mode: off` (a boolean in YAML
 *   1.1) is the string "off", `cwd: 2024` is "2024".
 * - list keys need a list, mapping keys need a mapping: no guessing.
 * - keys whose default is `null` are optional numbers (`context_length`): a number, a numeric
 *   string or null.
 */
import { parse as parseYamlValue } from "yaml";
import { ConfigError } from "./errors.js";
import { describeValue, YAML_SCHEMA } from "./yaml-doc.js";

const NUMERIC = /^[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;
const TRUE_WORDS = new Set(["true", "yes", "on", "1"]);
const FALSE_WORDS = new Set(["false", "no", "off", "0"]);

export type Coerced = { ok: true; value: unknown } | { ok: false; expected: string };

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What a key with this default expects, for messages: "a number", "a list", ... */
export function expectedKind(defaultValue: unknown): string {
  if (defaultValue === null) return "a number or null";
  if (Array.isArray(defaultValue)) return "a list";
  if (isPlainObject(defaultValue)) return "a mapping";
  if (typeof defaultValue === "boolean") return "true or false";
  return `a ${typeof defaultValue}`;
}

export function parseNumber(text: string): number | undefined {
  const trimmed = text.trim();
  if (!NUMERIC.test(trimmed)) return undefined;
  const value = Number(trimmed.replaceAll("_", ""));
  return Number.isFinite(value) ? value : undefined;
}

export function parseBoolean(text: string): boolean | undefined {
  const word = text.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return undefined;
}

/**
 * Checks a parsed YAML value (not null or undefined: the caller treats those as "unset") against
 * the default's type, converting where the rules above allow. `source` is the scalar's text as
 * written, used for string keys.
 */
export function coerceToDefault(value: unknown, defaultValue: unknown, source?: string): Coerced {
  const fail: Coerced = { ok: false, expected: expectedKind(defaultValue) };
  if (defaultValue === null || typeof defaultValue === "number") {
    if (typeof value === "number") return { ok: true, value };
    const parsed = typeof value === "string" ? parseNumber(value) : undefined;
    return parsed === undefined ? fail : { ok: true, value: parsed };
  }
  if (typeof defaultValue === "boolean") {
    if (typeof value === "boolean") return { ok: true, value };
    const parsed = typeof value === "string" ? parseBoolean(value) : undefined;
    return parsed === undefined ? fail : { ok: true, value: parsed };
  }
  if (typeof defaultValue === "string") {
    if (typeof value === "string") return { ok: true, value };
    if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") {
      return { ok: true, value: source ?? String(value) };
    }
    return fail;
  }
  if (Array.isArray(defaultValue)) return Array.isArray(value) ? { ok: true, value } : fail;
  if (isPlainObject(defaultValue)) return isPlainObject(value) ? { ok: true, value } : fail;
  return { ok: true, value };
}

/** `expected a number for agent.max_turns, got "ninety"` */
export function typeMismatch(key: string, expected: string, got: unknown): string {
  return `expected ${expected} for ${key}, got ${describeValue(got)}`;
}

/**
 * Parses a string from the command line or the environment into the type of `defaultValue`.
 * Lists take `a,b,c` or YAML flow `[a, b]`; mappings take JSON or YAML flow (`{a: 1}`). For a key
 * with no default (`undefined`), `true`/`false`, numbers, `null` and `[..]`/`{..}` are parsed and
 * anything else stays a string. Throws {@link ConfigError} naming `key` on a mismatch.
 */
export function parseRawValue(raw: string, defaultValue: unknown, key: string): unknown {
  const mismatch = (): ConfigError =>
    new ConfigError(typeMismatch(key, expectedKind(defaultValue), raw), { key });
  if (defaultValue === undefined) return parseUntyped(raw);
  if (defaultValue === null) {
    if (["", "null", "none", "~"].includes(raw.trim().toLowerCase())) return null;
    const value = parseNumber(raw);
    if (value === undefined) throw mismatch();
    return value;
  }
  if (typeof defaultValue === "number") {
    const value = parseNumber(raw);
    if (value === undefined) throw mismatch();
    return value;
  }
  if (typeof defaultValue === "boolean") {
    const value = parseBoolean(raw);
    if (value === undefined) throw mismatch();
    return value;
  }
  if (typeof defaultValue === "string") return raw;
  if (Array.isArray(defaultValue)) {
    const trimmed = raw.trim();
    if (trimmed.startsWith("[")) {
      const value = parseFlow(trimmed);
      if (!Array.isArray(value)) throw mismatch();
      return value;
    }
    return trimmed
      .split(",")
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
  }
  if (isPlainObject(defaultValue)) {
    const value = parseFlow(raw.trim());
    if (!isPlainObject(value)) throw mismatch();
    return value;
  }
  return raw;
}

function parseUntyped(raw: string): unknown {
  const trimmed = raw.trim();
  if (trimmed === "true" || trimmed === "false") return trimmed === "true";
  if (trimmed === "null") return null;
  const number = parseNumber(trimmed);
  if (number !== undefined && !trimmed.includes("_")) return number;
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    const value = parseFlow(trimmed);
    if (value !== undefined) return value;
  }
  return raw;
}

/** Parses JSON or YAML flow text; undefined when it does not parse. */
function parseFlow(text: string): unknown {
  try {
    return parseYamlValue(text, { ...YAML_SCHEMA, prettyErrors: false }) as unknown;
  } catch {
    return undefined;
  }
}
