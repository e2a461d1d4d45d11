/**
 * What the Config page shows besides the effective config: config.yaml as written with secret
 * values masked in place (comments, order and layout kept), and the names in `.env` (never their
 * values).
 */
import { readFileSync } from "node:fs";
import { parse as parseDotenv } from "dotenv";
import { isMap, isScalar, isSeq, type Node } from "yaml";
import { configPath, envPath } from "../config/home.js";
import { isSecretKey, maskSecret } from "../config/secrets.js";
import { parseYaml } from "../config/yaml-doc.js";

/** A `${VAR}` reference names a variable, it holds no secret: shown as written. */
const ENV_REFERENCE_ONLY = /^\s*\$\{[A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\}\s*$/;

interface Replacement {
  start: number;
  end: number;
  text: string;
}

function collect(node: Node | null | undefined, secret: boolean, out: Replacement[]): void {
  if (!node) return;
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : "";
      collect(pair.value as Node | null, isSecretKey(key), out);
    }
    return;
  }
  if (isSeq(node)) {
    for (const item of node.items) collect(item as Node, secret, out);
    return;
  }
  if (!secret || !isScalar(node) || !node.range) return;
  const value = node.value;
  if (typeof value !== "string" && typeof value !== "number") return;
  const text = String(value);
  if (text === "" || ENV_REFERENCE_ONLY.test(text)) return;
  // A block scalar's range ends with its last line break, which the line after it still needs.
  const [start, end] = node.range;
  const ending = node.type === "BLOCK_LITERAL" || node.type === "BLOCK_FOLDED" ? "\n" : "";
  out.push({ start, end, text: JSON.stringify(maskSecret(text)) + ending });
}

export interface RawConfig {
  /** config.yaml with secret values masked; null when there is no file or it does not parse. */
  text: string | null;
  /** Why `text` is null when the file exists. */
  error?: string;
}

/** config.yaml's text with every value under a secret-looking key masked where it stands. */
export function maskedConfigText(home: string): RawConfig {
  const file = configPath(home);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { text: null };
  }
  try {
    const parsed = parseYaml(text, file, { allowDuplicateKeys: true });
    const replacements: Replacement[] = [];
    collect(parsed.doc.contents as Node | null, false, replacements);
    let out = text;
    for (const r of replacements.sort((a, b) => b.start - a.start)) {
      out = out.slice(0, r.start) + r.text + out.slice(r.end);
    }
    // A masked text that no longer parses (an odd layout around a block scalar) is withheld
    // whole rather than shown half-masked.
    parseYaml(out, file, { allowDuplicateKeys: true });
    return { text: out };
  } catch (error) {
    return { text: null, error: error instanceof Error ? error.message : String(error) };
  }
}

export interface EnvNames {
  path: string;
  exists: boolean;
  /** Names defined in `.env`; `overridden` when the real environment sets the name too (it wins). */
  names: Array<{ name: string; overridden: boolean }>;
}

/** The variable names in `<home>/.env`, in file order. */
export function envFileNames(home: string, baseEnv: Readonly<Record<string, string | undefined>>): EnvNames {
  const path = envPath(home);
  let vars: Record<string, string>;
  try {
    vars = parseDotenv(readFileSync(path));
  } catch {
    return { path, exists: false, names: [] };
  }
  return {
    path,
    exists: true,
    names: Object.keys(vars).map((name) => ({ name, overridden: baseEnv[name] !== undefined })),
  };
}
