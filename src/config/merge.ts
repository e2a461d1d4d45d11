/**
 * Deep merge of a user config tree over the defaults, with the type rules of `coerce.ts`.
 * Pure: file positions come in through the context, so the same code checks `config.yaml` values
 * (with line numbers) and command-line overrides (without).
 */
import { coerceToDefault, isPlainObject, typeMismatch } from "./coerce.js";
import { ConfigError, type ConfigErrorDetails } from "./errors.js";
import { formatPath, type YamlPath } from "./yaml-doc.js";

export interface MergeContext {
  /** Where the value at `path` came from, for error messages. */
  locate(path: YamlPath): ConfigErrorDetails;
  /** The scalar's text as the user wrote it, when known (keeps `off` as "off" for string keys). */
  source?(path: YamlPath): string | undefined;
  /** Receives the dotted path of every key the user set to a non-null value. */
  userKeys?: Set<string>;
}

/**
 * Merges `user` over `defaults`: mappings merge key by key, lists and scalars replace, keys the
 * defaults do not know are kept as written. A null user value means "unset" where a default
 * exists (YAML `agent:` with nothing under it), so the default stays. Returns a new tree; neither
 * input is modified. Throws {@link ConfigError} when a value has the wrong type.
 */
export function mergeOverDefaults(
  defaults: unknown,
  user: unknown,
  context: MergeContext,
  path: YamlPath = [],
): unknown {
  if (user === undefined) return defaults;
  if (user === null && defaults !== undefined) return defaults;
  if (path.length > 0) context.userKeys?.add(formatPath(path));
  if (defaults === undefined) {
    recordNestedKeys(user, path, context.userKeys);
    return user;
  }
  const coerced = coerceToDefault(user, defaults, context.source?.(path));
  if (!coerced.ok) {
    const key = formatPath(path);
    throw new ConfigError(typeMismatch(key, coerced.expected, user), { ...context.locate(path), key });
  }
  if (!isPlainObject(defaults) || !isPlainObject(coerced.value)) return coerced.value;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(defaults)) setOwn(result, key, value);
  for (const [key, value] of Object.entries(coerced.value)) {
    const base = Object.hasOwn(defaults, key) ? defaults[key] : undefined;
    setOwn(result, key, mergeOverDefaults(base, value, context, [...path, key]));
  }
  return result;
}

function recordNestedKeys(value: unknown, path: YamlPath, keys: Set<string> | undefined): void {
  if (!keys || !isPlainObject(value)) return;
  for (const [key, child] of Object.entries(value)) {
    if (child === undefined) continue;
    const childPath = [...path, key];
    keys.add(formatPath(childPath));
    recordNestedKeys(child, childPath, keys);
  }
}

/** Assigns an own property even for names like `__proto__`, which plain assignment would not. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Reads an own property only, so `constructor` or `__proto__` never resolve to inherited values. */
export function getOwn(source: unknown, key: string): unknown {
  return isPlainObject(source) && Object.hasOwn(source, key) ? source[key] : undefined;
}
