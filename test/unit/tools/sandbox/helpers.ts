import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { fileTools } from "../../../../src/tools/file/index.js";
import { ToolRegistry } from "../../../../src/tools/registry.js";
import type { ExecuteCodeResult } from "../../../../src/tools/sandbox/execute-code.js";
import { executeCodeTool } from "../../../../src/tools/sandbox/index.js";
import { terminalTools } from "../../../../src/tools/terminal/index.js";
import type { ToolContext } from "../../../../src/tools/types.js";
import { makeToolContext } from "../../../support/tool-context.js";

export type SandboxCtx = ReturnType<typeof makeToolContext>;

/**
 * A context whose `callTool` runs a real registry (file tools, terminal, execute_code) with the
 * same context, the way the agent wires nested calls.
 */
export function sandboxContext(overrides: Partial<ToolContext> = {}): SandboxCtx {
  const registry = new ToolRegistry();
  registry.registerAll([...fileTools, ...terminalTools, executeCodeTool]);
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "hermes-sandbox-")));
  const ctx = makeToolContext({
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...pyenvVars() },
    enabledTools: registry.names(),
    ...overrides,
  });
  if (!("callTool" in overrides)) ctx.callTool = (name, args) => registry.execute(name, args, ctx);
  return ctx;
}

/** pyenv shims need their root to find the interpreter; harmless elsewhere. */
function pyenvVars(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("PYENV") && value !== undefined) out[name] = value;
  }
  return out;
}

/** Runs execute_code through the handler and returns its structured result. */
export async function runCode(
  ctx: ToolContext,
  code: string,
  language?: "python" | "javascript",
): Promise<ExecuteCodeResult> {
  const args = language === undefined ? { code } : { code, language };
  return (await executeCodeTool.handler(args, ctx)) as ExecuteCodeResult;
}

/** The default config with `code_execution` settings overridden. */
export function configWith(section: Record<string, unknown>): Record<string, unknown> {
  const config = defaultConfig() as unknown as Record<string, unknown>;
  const current = (config.code_execution ?? {}) as Record<string, unknown>;
  return { ...config, code_execution: { ...current, ...section } };
}
