/**
 * Running from source (`tsx src/cli/main.ts`): tool descriptions are sibling .md files imported as
 * their text. The bundle inlines them (esbuild's "text" loader, scripts/cli-bundle.mjs) and vitest
 * loads them the same way (vitest.config.ts), but Node knows no .md format and refuses the import
 * ("Unknown file extension"). This adds a module hook that loads a .md file as a module whose
 * default export is the file's text. main.ts calls it before any command module is imported, and
 * only when not bundled, so the built CLI never carries or runs it.
 */
import { register } from "node:module";

// Runs on Node's module-hooks thread, ahead of tsx's own hooks (the last registered runs first).
const HOOK = `import { readFile } from "node:fs/promises";
export async function load(url, context, next) {
  if (!url.startsWith("file:") || !new URL(url).pathname.endsWith(".md")) return next(url, context);
  const text = await readFile(new URL(url), "utf8");
  return { format: "module", source: "export default " + JSON.stringify(text) + ";\\n", shortCircuit: true };
}
`;

let registered = false;

/** Makes `import text from "./x.md"` work in this process; calling it again does nothing. */
export function registerMarkdownImports(): void {
  if (registered) return;
  registered = true;
  register(`data:text/javascript,${encodeURIComponent(HOOK)}`);
}
