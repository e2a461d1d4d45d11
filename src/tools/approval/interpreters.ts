/**
 * The interpreter-code analyser's contract, with a minimal implementation that fails closed: any
 * code except trivially harmless print-only one-liners needs approval. The full analyser (reading
 * `os.system`, `subprocess`, `shutil.rmtree`, `child_process`, backticks...) replaces this file.
 */
import type { AnalysisContext, Finding, ScriptLanguage } from "./types.js";

const PRINT_ONLY: Record<ScriptLanguage, RegExp> = {
  python: /^print\(\s*(?:'[^'\\{}]*'|"[^"\\{}]*"|-?\d+(?:\.\d+)?)?\s*\)$/,
  node: /^console\.log\(\s*(?:'[^'\\`$]*'|"[^"\\`$]*"|-?\d+(?:\.\d+)?)?\s*\)$/,
  perl: /^print\s*\(?\s*(?:'[^'\\]*'|"[^"\\$@]*")\s*\)?$/,
  ruby: /^(?:puts|print|p)\s*\(?\s*(?:'[^'\\]*'|"[^"\\#]*"|-?\d+)\s*\)?$/,
  php: /^(?:echo|print)\s*\(?\s*(?:'[^'\\]*'|"[^"\\$]*"|-?\d+)\s*\)?$/,
  lua: /^print\s*\(\s*(?:'[^'\\]*'|"[^"\\]*"|-?\d+)?\s*\)$/,
};

/**
 * Judges `source`, code in `language` about to run. Shell commands found in the code (os.system,
 * backticks...) go to `shell`, the command analyser. Returns the findings; empty when harmless.
 */
export function analyseScript(
  language: ScriptLanguage,
  source: string,
  _ctx: AnalysisContext,
  _shell: (command: string) => Finding[],
): Finding[] {
  const statements = source
    .split(/[;\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== "" && !s.startsWith("#") && !s.startsWith("//") && s !== "<?php" && s !== "?>");
  if (statements.every((s) => PRINT_ONLY[language].test(s))) return [];
  return [{ key: "interpreter_code", reason: `${language} code the analyser did not read` }];
}
