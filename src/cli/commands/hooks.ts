/**
 * `hermes hooks list|test EVENT|revoke COMMAND|doctor`: the shell hooks declared under `hooks:` in
 * config.yaml and their approvals in `shell-hooks-allowlist.json` (agent/shell-hooks/);
 * `folders|enable|disable` (hooks-gateway.ts): the gateway's hook folders.
 */
import { accessSync, constants, readFileSync } from "node:fs";
import type { HookEventName } from "../../agent/hooks.js";
import {
  type AllowlistEntry,
  allowlistPath,
  consentState,
  loadApprovals,
  revokeCommand,
  scriptFingerprint,
} from "../../agent/shell-hooks/allowlist.js";
import { hookEnvironment, profileName } from "../../agent/shell-hooks/register.js";
import { type HookRun, runHookCommand } from "../../agent/shell-hooks/run.js";
import {
  matchesTool,
  parseShellHooks,
  SHELL_HOOK_EVENTS,
  type ShellHookSpec,
} from "../../agent/shell-hooks/spec.js";
import { evaluateRun, hookStdin } from "../../agent/shell-hooks/wire.js";
import { CliFailure, type ConfigContext, defineCommand } from "../command.js";
import { registerGatewayHookCommands } from "./hooks-gateway.js";

/** The payloads `test` and `doctor` send: the fields the agent sends for each event. */
function syntheticPayload(event: HookEventName, cwd: string): Record<string, unknown> {
  const base = {
    session_id: "test-session",
    task_id: "test-task",
    platform: "cli",
    cwd,
    model: "test-model",
  };
  const call = { ...base, tool_name: "terminal", args: { command: "echo hello" }, tool_call_id: "test-call" };
  switch (event) {
    case "pre_tool_call":
      return call;
    case "post_tool_call":
      return { ...call, result: '{"output": "hello"}', ok: true, duration_ms: 42 };
    case "transform_tool_result":
      return { ...call, result: '{"output": "hello"}', ok: true };
    case "pre_llm_call":
      return { ...base, user_message: "What is the weather?", is_first_turn: true, history_length: 0 };
    case "post_llm_call":
      return {
        ...base,
        user_message: "What is the weather?",
        assistant_response: "Sunny.",
        reason: "completed",
      };
    case "post_api_request":
      return { ...base, api_call_count: 1, finish_reason: "tool_calls", tool_names: ["terminal"] };
    case "on_session_end":
      return { ...base, reason: "close" };
    case "subagent_start":
      return { ...base, child_session_id: "test-child", goal: "Summarise the notes" };
    case "subagent_stop":
      return {
        ...base,
        child_session_id: "test-child",
        goal: "Summarise the notes",
        status: "completed",
        summary: "Synthetic summary for hooks test",
        duration_ms: 1234,
      };
    default:
      return base;
  }
}

export const hooksCommand = defineCommand({
  name: "hooks",
  description:
    "shell hooks from config.yaml (hooks:) and their approvals: list | test EVENT | revoke COMMAND | doctor; " +
    "gateway hook folders: folders | enable NAME | disable NAME",
  needs: "config",
  defaultSubcommand: "list",
  parse: (root, run) => {
    root.addHelpText(
      "after",
      [
        "",
        "config.yaml:",
        "  hooks:",
        "    pre_tool_call:                 # also post_tool_call, pre_llm_call, post_llm_call,",
        "      - matcher: terminal          # post_api_request, on_session_start/end, subagent_start/stop",
        "        command: ~/.hermes/hooks/guard.sh",
        "        timeout: 10                # seconds (default 60, at most 300)",
        "",
        "A hook reads the event as JSON on stdin and may answer JSON on stdout:",
        '  {"decision": "block", "reason": "..."}  or exit 2 (pre_tool_call: the call is blocked)',
        '  {"action": "modify", "args": {...}}    (pre_tool_call: the call runs with these arguments)',
        '  {"context": "..."}                     (pre_llm_call: added to the user\'s message)',
        "A new or edited hook runs only once approved: at the prompt of an interactive hermes, or",
        "with --accept-hooks, HERMES_ACCEPT_HOOKS=1 or hooks_auto_accept: true. Approvals are kept in",
        "shell-hooks-allowlist.json in the home. Hooks run without provider keys in their environment.",
      ].join("\n"),
    );
    root
      .command("list")
      .alias("ls")
      .description("the configured shell hooks, by event, and whether each is approved")
      .action(run((ctx: ConfigContext) => list(ctx)));
    root
      .command("test")
      .description("run the hooks of EVENT once with a synthetic payload and show what each answered")
      .argument("<event>", SHELL_HOOK_EVENTS.join(", "))
      .option("--for-tool <name>", "the tool name of the payload (only hooks whose matcher fits run)")
      .option("--payload-file <path>", "a JSON object merged into the synthetic payload")
      .action(
        run((ctx: ConfigContext, event: string, flags: { forTool?: string; payloadFile?: string }) =>
          test(ctx, event, flags),
        ),
      );
    root
      .command("revoke")
      .aliases(["remove", "rm"])
      .description(
        "forget the approval of COMMAND (every event); running processes keep it until they restart",
      )
      .argument("<command>", "the hook's command, exactly as in config.yaml")
      .action(run((ctx: ConfigContext, command: string) => revoke(ctx, command)));
    root
      .command("doctor")
      .description("check each hook: script present and executable, approved, unchanged, answers valid JSON")
      .action(run((ctx: ConfigContext) => doctor(ctx)));
    registerGatewayHookCommands(root, run);
  },
});

function configured(ctx: ConfigContext): ShellHookSpec[] {
  const { specs, warnings } = parseShellHooks(ctx.config["hooks"]);
  for (const warning of warnings) ctx.io.err(`hermes hooks: warning: ${warning}`);
  return specs;
}

function approvalLine(ctx: ConfigContext, spec: ShellHookSpec, approvals: readonly AllowlistEntry[]): string {
  const consent = consentState(
    approvals,
    spec.event,
    spec.command,
    scriptFingerprint(spec.command, ctx.env["HOME"]),
  );
  if (consent.state === "new") return "✗ not approved";
  const at = consent.entry.approved_at ? ` ${consent.entry.approved_at}` : "";
  return consent.state === "changed" ? `⚠ script changed since approved${at}` : `✓ approved${at}`;
}

function list(ctx: ConfigContext): number {
  const specs = configured(ctx);
  if (specs.length === 0) {
    ctx.io.out("No shell hooks configured (hooks: in config.yaml). Example:");
    ctx.io.out(
      "  hooks:\n    pre_tool_call:\n      - matcher: terminal\n        command: ~/.hermes/hooks/guard.sh\n        timeout: 10",
    );
    return 0;
  }
  const approvals = loadApprovals(ctx.home);
  ctx.io.out(`Shell hooks (${specs.length}):`);
  for (const event of SHELL_HOOK_EVENTS) {
    const ofEvent = specs.filter((s) => s.event === event);
    if (ofEvent.length === 0) continue;
    ctx.io.out(`\n  [${event}]`);
    for (const spec of ofEvent) {
      const matcher = spec.matcher ? ` matcher=${JSON.stringify(spec.matcher)}` : "";
      const closed = spec.failClosed ? ", fail_closed" : "";
      ctx.io.out(`    - ${spec.command}${matcher} (timeout ${spec.timeoutSeconds} s${closed})`);
      ctx.io.out(`      ${approvalLine(ctx, spec, approvals)}`);
    }
  }
  ctx.io.out(`\nApprovals: ${allowlistPath(ctx.home)}`);
  return 0;
}

async function test(
  ctx: ConfigContext,
  event: string,
  flags: { forTool?: string; payloadFile?: string },
): Promise<number> {
  if (!(SHELL_HOOK_EVENTS as readonly string[]).includes(event)) {
    throw new CliFailure(`unknown event "${event}"; valid: ${SHELL_HOOK_EVENTS.join(", ")}.`, 2);
  }
  const name = event as HookEventName;
  const payload = syntheticPayload(name, process.cwd());
  if (flags.forTool) payload["tool_name"] = flags.forTool;
  if (flags.payloadFile) {
    let custom: unknown;
    try {
      custom = JSON.parse(readFileSync(flags.payloadFile, "utf8"));
    } catch (error) {
      throw new CliFailure(`--payload-file ${flags.payloadFile}: ${(error as Error).message}`, 2);
    }
    if (typeof custom !== "object" || custom === null || Array.isArray(custom)) {
      throw new CliFailure(`--payload-file ${flags.payloadFile}: expected a JSON object.`, 2);
    }
    Object.assign(payload, custom);
  }
  const tool = typeof payload["tool_name"] === "string" ? payload["tool_name"] : undefined;
  const specs = configured(ctx).filter(
    (s) =>
      s.event === name &&
      (name !== "pre_tool_call" && name !== "post_tool_call" ? true : matchesTool(s.matcher, tool)),
  );
  if (specs.length === 0) {
    ctx.io.out(
      `No shell hooks configured for ${event}${flags.forTool ? ` matching the tool ${flags.forTool}` : ""}.`,
    );
    return 0;
  }
  ctx.io.out(`Running ${specs.length} hook(s) for ${event}:`);
  let failed = false;
  for (const spec of specs) {
    ctx.io.out(`\n  → ${spec.command}`);
    const run = await runOnce(ctx, spec, payload);
    failed = printRun(ctx, spec, run) || failed;
  }
  return failed ? 1 : 0;
}

function runOnce(
  ctx: ConfigContext,
  spec: ShellHookSpec,
  payload: Record<string, unknown>,
): Promise<HookRun> {
  return runHookCommand(spec.command, hookStdin(spec.event, payload, profileName(ctx.home)), {
    env: hookEnvironment(ctx.config, ctx.env, ctx.home),
    cwd: process.cwd(),
    timeoutMs: spec.timeoutSeconds * 1000,
  });
}

/** Prints one run; true when it failed (did not run, timed out). */
function printRun(ctx: ConfigContext, spec: ShellHookSpec, run: HookRun): boolean {
  const seconds = (run.elapsedMs / 1000).toFixed(2);
  if (run.error) {
    ctx.io.out(`      ✗ ${run.error}`);
    return true;
  }
  if (run.timedOut) {
    ctx.io.out(`      ✗ timed out after ${spec.timeoutSeconds} s (killed)`);
    return true;
  }
  ctx.io.out(`      exit ${run.code}, ${seconds} s`);
  for (const [label, text] of [
    ["stdout", run.stdout],
    ["stderr", run.stderr],
  ] as const) {
    const shown = text.trim();
    if (shown) ctx.io.out(`      ${label}: ${shown.length > 400 ? `${shown.slice(0, 397)}...` : shown}`);
  }
  const { answer } = evaluateRun(spec, run);
  ctx.io.out(
    answer ? `      answer: ${JSON.stringify(answer)}` : "      answer: none (the hook only observed)",
  );
  return false;
}

async function revoke(ctx: ConfigContext, command: string): Promise<number> {
  const removed = await revokeCommand(ctx.home, command.trim());
  if (removed === 0) {
    ctx.io.out(`No approval found for: ${command}`);
    return 1;
  }
  ctx.io.out(`Removed ${removed} approval(s) of: ${command}`);
  ctx.io.out("Running hermes processes (a chat, the gateway) keep the hook until they restart.");
  return 0;
}

async function doctor(ctx: ConfigContext): Promise<number> {
  const specs = configured(ctx);
  if (specs.length === 0) {
    ctx.io.out("No shell hooks configured: nothing to check.");
    return 0;
  }
  const approvals = loadApprovals(ctx.home);
  let problems = 0;
  ctx.io.out(`Checking ${specs.length} shell hook(s):`);
  for (const spec of specs) {
    ctx.io.out(`\n  [${spec.event}] ${spec.command}`);
    const fingerprint = scriptFingerprint(spec.command, ctx.env["HOME"]);
    if (fingerprint.path) {
      if (executable(fingerprint.path, spec.command, ctx.env["HOME"]))
        ctx.io.out("      ✓ the script exists and can run");
      else {
        problems++;
        ctx.io.out(`      ✗ ${fingerprint.path} is missing or not executable (chmod +x it, or fix the path)`);
      }
    }
    const consent = consentState(approvals, spec.event, spec.command, fingerprint);
    if (consent.state === "new") {
      problems++;
      ctx.io.out(
        "      ✗ not approved: it does not run (approve it at the prompt of an interactive hermes, or with --accept-hooks)",
      );
      ctx.io.out("      ℹ not run here: approve it first, then run hermes hooks doctor again");
      continue;
    }
    if (consent.state === "changed") {
      problems++;
      ctx.io.out("      ⚠ the script changed since it was approved: it does not run until approved again");
      ctx.io.out("      ℹ not run here: review the change and approve it again first");
      continue;
    }
    ctx.io.out(`      ✓ approved${consent.entry.approved_at ? ` ${consent.entry.approved_at}` : ""}`);
    const run = await runOnce(ctx, spec, syntheticPayload(spec.event, process.cwd()));
    if (run.error || run.timedOut) {
      problems++;
      ctx.io.out(`      ✗ ${run.error ?? `timed out after ${spec.timeoutSeconds} s on a synthetic payload`}`);
      continue;
    }
    const stdout = run.stdout.trim();
    if (!stdout) ctx.io.out(`      ✓ ran (exit ${run.code}) with no output: it only observes`);
    else if (isJson(stdout)) ctx.io.out(`      ✓ answered valid JSON (exit ${run.code})`);
    else {
      problems++;
      ctx.io.out(`      ✗ its output is not JSON (exit ${run.code}): ${stdout.slice(0, 120)}`);
    }
  }
  ctx.io.out(problems ? `\n${problems} problem(s) found.` : "\nAll shell hooks look healthy.");
  return problems ? 1 : 0;
}

/** A script named first runs itself (needs +x); one given to an interpreter needs only reading. */
function executable(path: string, command: string, home: string | undefined): boolean {
  const first = command.trim().split(/\s+/)[0] ?? "";
  const direct = first === path || (home !== undefined && first.replace(/^~(?=\/|$)/, home) === path);
  try {
    accessSync(path, direct ? constants.X_OK : constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
