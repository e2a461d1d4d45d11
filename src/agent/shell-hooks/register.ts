/**
 * Shell hooks onto the hook bus: each `hooks.<event>` entry of config.yaml that the user approved
 * becomes a bus handler that runs the command (run.ts) and turns its reply into the bus's answer
 * (wire.ts). A hook never approved (or whose script changed since) is not registered: it is
 * asked about where someone can answer (`ask`), approved by `--accept-hooks`,
 * `HERMES_ACCEPT_HOOKS=1` or `hooks_auto_accept: true`, and otherwise refused with a message that
 * says how to allow it.
 *
 * Hooks run with the terminal's environment rule (what Hermes loaded from `.env` stays out) and,
 * on top, without any provider key or platform token even when the user's own shell exported it:
 * a hook is a script configured once and then run on every call, so it gets less than the
 * terminal, never more.
 */
import { statSync } from "node:fs";
import { basename, dirname } from "node:path";
import { loadEnvFile } from "../../config/env-file.js";
import { scrubEnv, terminalEnv } from "../../util/env-scrub.js";
import type { HookBus, HookHandlers } from "../hooks.js";
import {
  consentState,
  loadApprovals,
  recordApproval,
  type ScriptFingerprint,
  scriptFingerprint,
} from "./allowlist.js";
import { runHookCommand } from "./run.js";
import { matchesTool, parseShellHooks, type ShellHookSpec, TOOL_EVENTS } from "./spec.js";
import { evaluateRun, hookStdin } from "./wire.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface ConsentRequest {
  spec: ShellHookSpec;
  /** True when it was approved before and its script changed since. */
  changed: boolean;
  fingerprint: ScriptFingerprint;
}

export interface ShellHookOptions {
  bus: HookBus;
  /** The loaded config: `hooks`, `hooks_auto_accept`, `terminal.env_passthrough` are read. */
  config: Readonly<Record<string, unknown>>;
  home: string;
  /** The process's environment (with `.env` merged in). */
  env: Env;
  /** `--accept-hooks`. */
  acceptHooks?: boolean;
  /** Asks the user about a hook not yet approved; absent where nobody can answer. */
  ask?: (request: ConsentRequest) => Promise<boolean>;
  /** A hook that failed, timed out or printed something unreadable while running (logged). */
  onRunWarning?: (message: string) => void;
}

export interface ShellHookReport {
  registered: ShellHookSpec[];
  /** Not registered: not approved (or changed since), and nobody approved it now. */
  refused: ConsentRequest[];
  /** Config problems (`hooks.<event>[i]` ...), one line each. */
  warnings: string[];
  /** Set when shell hooks were skipped as a whole (safe mode). */
  skipped?: string;
}

const TRUTHY = new Set(["1", "true", "yes", "on"]);
/** What the bus allows a shell hook beyond its own timeout (its kill and drain come first). */
const BUS_GRACE_MS = 5_000;
/** (home, event, matcher, command) already on each bus: loading twice in a process adds nothing. */
const onBus = new WeakMap<HookBus, Set<string>>();

/**
 * Reads `hooks:`, settles consent and registers the approved hooks on `options.bus`. Events fired
 * while this runs wait for it (`bus.whenLoaded`). Never rejects for a bad hook entry.
 */
export function loadShellHooks(options: ShellHookOptions): Promise<ShellHookReport> {
  const loading = registerAll(options);
  options.bus.whenLoaded(loading);
  return loading;
}

async function registerAll(options: ShellHookOptions): Promise<ShellHookReport> {
  const { config, env, home } = options;
  if (TRUTHY.has((env["HERMES_SAFE_MODE"] ?? "").trim().toLowerCase())) {
    return { registered: [], refused: [], warnings: [], skipped: "HERMES_SAFE_MODE is set" };
  }
  const { specs, warnings } = parseShellHooks(config["hooks"]);
  const report: ShellHookReport = { registered: [], refused: [], warnings };
  if (specs.length === 0) return report;
  const accept = acceptsHooks(options);
  const seen = onBus.get(options.bus) ?? new Set<string>();
  onBus.set(options.bus, seen);
  const childEnv = hookEnvironment(config, env, home);
  const profile = profileName(home);
  for (const spec of specs) {
    const key = [home, spec.event, spec.matcher ?? "", spec.command].join("\0");
    if (seen.has(key)) continue;
    const fingerprint = scriptFingerprint(spec.command, env["HOME"]);
    const consent = consentState(loadApprovals(home), spec.event, spec.command, fingerprint);
    if (consent.state !== "approved") {
      const request: ConsentRequest = { spec, changed: consent.state === "changed", fingerprint };
      const approved = accept || (options.ask ? await options.ask(request) : false);
      if (!approved) {
        report.refused.push(request);
        continue;
      }
      try {
        await recordApproval(home, spec.event, spec.command, fingerprint);
      } catch (error) {
        // The approval holds for this run; the next start asks again.
        warnings.push(
          `the approval of ${spec.command} was not saved (${error instanceof Error ? error.message : String(error)}); it will be asked about again next time.`,
        );
      }
    }
    seen.add(key);
    register(options, spec, childEnv, profile);
    report.registered.push(spec);
  }
  return report;
}

function register(options: ShellHookOptions, spec: ShellHookSpec, childEnv: Env, profile: string): void {
  const source = `shell:${spec.event}[${spec.index}]`;
  const handler = async (
    payload: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<unknown> => {
    if (TOOL_EVENTS.has(spec.event) && !matchesTool(spec.matcher, stringField(payload, "tool_name"))) {
      return undefined;
    }
    const run = await runHookCommand(spec.command, hookStdin(spec.event, payload, profile), {
      env: { ...childEnv },
      cwd: usableDir(stringField(payload, "cwd")) ?? options.home,
      timeoutMs: spec.timeoutSeconds * 1000,
      signal,
    });
    const { answer, warnings } = evaluateRun(spec, run);
    for (const warning of warnings)
      options.onRunWarning?.(`shell hook ${spec.event} (${spec.command}): ${warning}`);
    if (!answer) return undefined;
    if (spec.event === "pre_tool_call") {
      if (answer.kind === "block") return { action: "block", reason: answer.message };
      if (answer.kind === "modify") return { action: "rewrite", args: answer.args };
      return undefined;
    }
    if (spec.event === "pre_llm_call" && answer.kind === "context") return { context: answer.context };
    return undefined;
  };
  options.bus.register(spec.event, handler as unknown as HookHandlers[typeof spec.event], {
    source,
    timeoutMs: spec.timeoutSeconds * 1000 + BUS_GRACE_MS,
    ...(spec.failClosed ? { failClosed: true } : {}),
  });
}

/** `--accept-hooks`, `HERMES_ACCEPT_HOOKS`, or `hooks_auto_accept` (any one is enough). */
export function acceptsHooks(options: Pick<ShellHookOptions, "acceptHooks" | "env" | "config">): boolean {
  if (options.acceptHooks) return true;
  if (TRUTHY.has((options.env["HERMES_ACCEPT_HOOKS"] ?? "").trim().toLowerCase())) return true;
  const configured = options.config["hooks_auto_accept"];
  if (typeof configured === "boolean") return configured;
  return typeof configured === "string" && TRUTHY.has(configured.trim().toLowerCase());
}

/**
 * A hook's environment: the terminal's (names Hermes loaded from `.env` withheld unless in
 * `terminal.env_passthrough`), then no provider keys or platform tokens at all, plus
 * `HERMES_HOME`. Pure apart from reading `.env`'s names.
 */
export function hookEnvironment(
  config: Readonly<Record<string, unknown>>,
  env: Env,
  home: string,
): Record<string, string | undefined> {
  let withheld: string[] = [];
  try {
    withheld = loadEnvFile(home, {}).loaded;
  } catch {
    // An unreadable .env put nothing into the environment either.
  }
  const terminal = config["terminal"] as { env_passthrough?: unknown } | undefined;
  const passthrough = Array.isArray(terminal?.env_passthrough) ? terminal.env_passthrough.map(String) : [];
  return { ...scrubEnv(terminalEnv(env, { withheld, passthrough })), HERMES_HOME: home };
}

/** The profile a home belongs to, as upstream names it in the payload ("default" for the root). */
export function profileName(home: string): string {
  return basename(dirname(home)) === "profiles" ? basename(home) : "default";
}

/** The message for a hook that did not run because nobody approved it. */
export function refusalMessage(request: ConsentRequest): string {
  const why = request.changed ? "its script changed since it was approved" : "it has not been approved yet";
  return (
    `shell hook ${request.spec.event} (${request.spec.command}) is not run: ${why}. ` +
    "To allow it, run hermes on a terminal and answer the prompt, or pass --accept-hooks, " +
    "or set HERMES_ACCEPT_HOOKS=1 or hooks_auto_accept: true in config.yaml (see hermes hooks list)."
  );
}

function stringField(payload: Readonly<Record<string, unknown>>, key: string): string | undefined {
  const value = payload[key];
  return typeof value === "string" ? value : undefined;
}

function usableDir(dir: string | undefined): string | undefined {
  if (!dir) return undefined;
  try {
    return statSync(dir).isDirectory() ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** Tells `say` each config problem and each refused hook of `report` (one line each). */
export function reportShellHooks(report: ShellHookReport, say: (line: string) => void): void {
  for (const warning of report.warnings) say(warning);
  for (const request of report.refused) say(refusalMessage(request));
}
