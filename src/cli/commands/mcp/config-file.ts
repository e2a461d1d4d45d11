/**
 * Adding and removing `mcp_servers.<name>` in config.yaml, keeping the user's comments, key order
 * and every other key. Adding goes through `hermes config set`'s writer; removing deletes the
 * entry's lines in place (re-serialising through the YAML document only when that is not
 * possible), and either way the file is checked to read back as intended before it is replaced.
 */
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { isMap, isScalar, type Pair, type YAMLMap } from "yaml";
import { ConfigError } from "../../../config/errors.js";
import { configPath } from "../../../config/home.js";
import { setConfigValue } from "../../../config/write.js";
import { parseYaml } from "../../../config/yaml-doc.js";
import { atomicWriteFileSync } from "../../../util/atomic-write.js";

/** Writes (or replaces) `mcp_servers.<name>`; returns the file written. Throws {@link ConfigError}. */
export function writeMcpServer(home: string, name: string, entry: Record<string, unknown>): string {
  return setConfigValue(home, `mcp_servers.${name}`, JSON.stringify(entry)).path;
}

/**
 * Deletes `mcp_servers.<name>` (and `mcp_servers` itself when it was the last one). Returns false,
 * writing nothing, when there is no such entry. Throws {@link ConfigError} when the file does not
 * parse or could not be edited safely.
 */
export function removeMcpServer(home: string, name: string): boolean {
  const file = configPath(home);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw new ConfigError(`cannot read the file (${String(error)})`, { file });
  }
  const parsed = parseYaml(text, file);
  const { doc } = parsed;
  const root = doc.contents;
  const servers = doc.get("mcp_servers", true);
  if (!isMap(root) || !isMap(servers) || !servers.has(name)) return false;
  const last = servers.items.length === 1;
  const expected = doc.toJS() as Record<string, unknown>;
  if (last) delete expected["mcp_servers"];
  else delete (expected["mcp_servers"] as Record<string, unknown>)[name];

  const reads = (candidate: string): boolean => {
    try {
      return isDeepStrictEqual(parseYaml(candidate, file).doc.toJS(), expected);
    } catch {
      return false;
    }
  };
  let output = last ? cutPair(text, root, "mcp_servers") : cutPair(text, servers, name);
  if (output === undefined || !reads(output)) {
    if (last) doc.delete("mcp_servers");
    else doc.deleteIn(["mcp_servers", name]);
    output = doc.toString({ lineWidth: 0, indentSeq: !/^[^\s#][^\n]*:[ \t]*\r?\n- /m.test(text) });
    if (!reads(output)) {
      throw new ConfigError(`could not remove mcp_servers.${name} safely; edit config.yaml by hand`, {
        file,
      });
    }
  }
  atomicWriteFileSync(file, output);
  return true;
}

/** `text` without the lines of `key`'s entry in block mapping `map`; undefined when not that simple. */
function cutPair(text: string, map: YAMLMap, key: string): string | undefined {
  if (map.flow) return undefined;
  const pair = map.items.find((p: Pair) => isScalar(p.key) && p.key.value === key);
  const keyRange = pair && isScalar(pair.key) ? pair.key.range : undefined;
  if (!pair || !keyRange) return undefined;
  const valueRange = (pair.value as { range?: [number, number, number] } | null)?.range;
  const start = text.lastIndexOf("\n", keyRange[0] - 1) + 1;
  if (text.slice(start, keyRange[0]).trim() !== "") return undefined;
  const end = valueRange ? valueRange[2] : keyRange[2];
  const lineEnd = end > 0 && text[end - 1] === "\n" ? end : text.indexOf("\n", end);
  return text.slice(0, start) + (lineEnd === -1 ? "" : text.slice(lineEnd === end ? end : lineEnd + 1));
}
