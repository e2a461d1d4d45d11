/**
 * `hermes chat` / `hermes -q` / `hermes -z`: one-shot runs and a line-based interactive session.
 */
import { createInterface } from "node:readline/promises";
import type { AgentEvent } from "../../agent/events.js";
import type { ChatFlags } from "../flags.js";
import { type OutputMode, Renderer } from "../render.js";

export async function runChat(flags: ChatFlags): Promise<number> {
  const { loadCliContext } = await import("../home-env.js");
  const loaded = await loadCliContext(flags.profile);
  if ("exitCode" in loaded) return loaded.exitCode;
  const { home, env, config } = loaded;
  if (flags.maxTurns) config.agent.max_turns = flags.maxTurns;
  const toolsets = flags.toolsets
    ? flags.toolsets
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : config.toolsets;

  if (flags.listToolsets) {
    const { TOOLSETS } = await import("../../tools/toolsets.js");
    for (const [name, spec] of Object.entries(TOOLSETS)) {
      process.stdout.write(`${name.padEnd(20)} ${spec.description}\n`);
    }
    return 0;
  }
  if (flags.listTools) {
    const { createBuiltinRegistry } = await import("../../tools/builtin.js");
    const { resolveToolsets } = await import("../../tools/toolsets.js");
    const registry = createBuiltinRegistry();
    const resolved = resolveToolsets(toolsets, {
      custom: config.custom_toolsets,
      disabled: config.agent.disabled_toolsets,
      knownTools: new Set(registry.names()),
    });
    const names = await registry.available(resolved.tools, { env, config });
    for (const name of names) {
      const tool = registry.get(name);
      const summary = (tool?.description.split(/(?<=\.)\s/)[0] ?? "").slice(0, 90);
      process.stdout.write(`${name.padEnd(16)} ${tool?.toolset.padEnd(10) ?? ""} ${summary}\n`);
    }
    if (resolved.unknown.length > 0)
      process.stderr.write(`unknown toolsets: ${resolved.unknown.join(", ")}\n`);
    return 0;
  }

  const { resolveRuntime, NoProviderError } = await import("../../ai/resolve.js");
  let runtime: import("../../ai/resolve.js").ResolvedRuntime;
  try {
    runtime = resolveRuntime({
      flags: {
        ...(flags.model ? { model: flags.model } : {}),
        ...(flags.provider ? { provider: flags.provider } : {}),
        ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
      },
      config,
      env,
    });
  } catch (error) {
    if (error instanceof NoProviderError || error instanceof Error) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }

  let prompt = flags.oneshot ?? flags.query;
  const interactive = prompt === undefined && process.stdin.isTTY === true;
  if (prompt === undefined && !interactive) {
    prompt = (await readStdin()).trim();
    if (!prompt) {
      process.stderr.write('hermes: no prompt given. Use -q "...", -z "...", or pipe text on stdin.\n');
      return 2;
    }
  }

  const mode: OutputMode = flags.oneshot !== undefined ? "oneshot" : flags.quiet ? "quiet" : "normal";
  const ttyApprovals = process.stdin.isTTY === true && process.stderr.isTTY === true && mode !== "oneshot";
  const { isYoloMode } = await import("../../config/precedence.js");
  const { AIAgent } = await import("../../agent/agent.js");
  const { askApproval, askClarify, persistAllowlistEntry } = await import("../prompts.js");
  const agent = new AIAgent({
    config,
    home,
    env,
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.provider ? { provider: flags.provider } : {}),
    ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    resolved: runtime,
    toolsets,
    yolo: flags.yolo === true || isYoloMode(env),
    platform: "cli",
    ...(ttyApprovals
      ? {
          onApproval: askApproval,
          onClarify: askClarify,
          persistAlwaysApproval: (key: string) => persistAllowlistEntry(home, config, key),
        }
      : {}),
  });

  const color = process.stdout.isTTY === true && !env.NO_COLOR;
  const renderer = new Renderer({
    mode,
    verbose: flags.verbose === true,
    stdout: process.stdout,
    stderr: process.stderr,
    color,
  });
  const unsubscribe = agent.on((event: AgentEvent) => renderer.handle(event));

  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts >= 2 || !agent.running) {
      process.stderr.write("\n");
      process.exit(130);
    }
    process.stderr.write("\n⏹ interrupting… (Ctrl+C again to quit)\n");
    agent.interrupt();
  };
  process.on("SIGINT", onSigint);

  try {
    if (interactive) return await repl(agent, () => (interrupts = 0));
    const result = await agent.run(prompt ?? "").result;
    if (result.reason === "completed") return 0;
    if (result.reason === "interrupted") return 130;
    return 1;
  } finally {
    process.off("SIGINT", onSigint);
    unsubscribe();
    await agent.close();
  }
}

/**
 * A line-based session. Readline is open only while a line is typed: during a turn the terminal is
 * back in cooked mode, so Ctrl+C arrives as SIGINT and interrupts the turn.
 */
async function repl(
  agent: import("../../agent/agent.js").AIAgent,
  resetInterrupts: () => void,
): Promise<number> {
  const history: string[] = [];
  process.stderr.write("Hermes — type a message, /quit to leave. Ctrl+C interrupts a turn.\n");
  while (true) {
    const line = await readLine("› ", history);
    if (line === null || line === "/quit" || line === "/exit") return 0;
    if (!line) continue;
    resetInterrupts();
    await agent.run(line).result;
  }
}

/** Reads one line; null when the user pressed Ctrl+C or Ctrl+D at the prompt. */
function readLine(prompt: string, history: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    const rl = createInterface({
      input: process.stdin,
      output: process.stderr,
      terminal: true,
      history,
      historySize: 1000,
    });
    let answered = false;
    rl.on("SIGINT", () => {
      process.stderr.write("\n");
      rl.close();
    });
    rl.on("close", () => {
      if (!answered) resolve(null);
    });
    rl.question(prompt).then(
      (text) => {
        answered = true;
        const trimmed = text.trim();
        if (trimmed) history.unshift(trimmed);
        rl.close();
        resolve(trimmed);
      },
      () => undefined,
    );
  });
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
