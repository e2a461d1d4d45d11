/**
 * `${VAR}` and `${VAR:-default}` references inside config string values, resolved from the
 * environment (the real one plus `.env`).
 */

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export interface Substitution {
  value: string;
  /** Variables referenced without a default that were unset (they became empty strings). */
  missing: string[];
}

/**
 * Replaces every reference in `text`. `${VAR:-fallback}` uses the fallback when VAR is unset or
 * empty (as in sh); `${VAR}` with VAR unset becomes the empty string and is listed in `missing`.
 */
export function substituteEnv(text: string, env: Readonly<Record<string, string | undefined>>): Substitution {
  const missing: string[] = [];
  if (!text.includes("${")) return { value: text, missing };
  const value = text.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
    const current = env[name];
    if (fallback !== undefined) return current === undefined || current === "" ? fallback : current;
    if (current === undefined) {
      missing.push(name);
      return "";
    }
    return current;
  });
  return { value, missing };
}
