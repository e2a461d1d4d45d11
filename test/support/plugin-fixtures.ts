/** Plugin folders for tests: a manifest and an ESM entry written into a temp dir. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A plugin that adds the tool `<tool>` (answers `pong:<text>` and the marker) and a
 * `pre_tool_call` hook blocking any terminal command that contains `<blockWord>`.
 */
export function guardPluginSource(tool: string, blockWord: string, marker: string): string {
  return `
export function register(ctx) {
  ctx.registerTool({
    name: ${JSON.stringify(tool)},
    description: "Echoes text back (test plugin).",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    handler: (args) => ${JSON.stringify(marker)} + ":" + args.text,
  });
  ctx.registerHook("pre_tool_call", (payload) => {
    if (payload.tool_name === "terminal" && String(payload.args.command).includes(${JSON.stringify(blockWord)})) {
      return { action: "block", reason: "no ${blockWord} here (" + ${JSON.stringify(marker)} + ")" };
    }
    return undefined;
  });
}
`;
}

/** Writes `<parent>/<name>/plugin.yaml` and `index.mjs`; returns the folder. */
export function writePlugin(parent: string, name: string, entrySource: string, extraYaml = ""): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "plugin.yaml"),
    `name: ${name}\nversion: 1.2.3\ndescription: test plugin ${name}\nentry: index.mjs\n${extraYaml}`,
  );
  writeFileSync(join(dir, "index.mjs"), entrySource);
  return dir;
}
