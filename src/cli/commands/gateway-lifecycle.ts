/**
 * How `hermes gateway run` ends: SIGINT/SIGTERM stop it (a second signal exits at once); SIGUSR1
 * (upstream's in-band restart, what `hermes gateway restart` sends) or `/restart` in a chat restart
 * it: new requests are turned away while running turns may finish (`agent.restart_after_turn_timeout`),
 * then it stops as on SIGTERM and comes back. Under a service manager (systemd's INVOCATION_ID,
 * launchd's XPC_SERVICE_NAME) it exits with 75 (EX_TEMPFAIL, upstream's code) and the manager
 * starts it again; otherwise it starts its successor itself, detached, its output in
 * `logs/gateway-output.log` as `hermes gateway start` does.
 */
import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { join } from "node:path";

/** Upstream's exit code asking the service manager for a restart. */
export const RESTART_EXIT_CODE = 75;

export type GatewayEnd = "stop" | "restart";

/** Whether a service manager runs this process (it restarts us when we exit with 75). */
export function supervised(env: Readonly<Record<string, string | undefined>>): boolean {
  const xpc = env["XPC_SERVICE_NAME"] ?? "";
  return Boolean(env["INVOCATION_ID"] || (xpc && xpc !== "0"));
}

/**
 * Listens for how the gateway should end. `restart` is also what a chat's `/restart` calls.
 * `ended` resolves with the first request; a stop signal after a restart began still stops
 * (`stopped`), and a second stop signal exits at once.
 */
export function gatewayEnding(
  stopSignal: Promise<void> | undefined,
  err: (line: string) => void,
): { ended: Promise<GatewayEnd>; stopped: Promise<void>; restart: () => void; dispose: () => void } {
  let resolveEnd!: (end: GatewayEnd) => void;
  let resolveStop!: () => void;
  const ended = new Promise<GatewayEnd>((resolve) => (resolveEnd = resolve));
  const stopped = new Promise<void>((resolve) => (resolveStop = resolve));
  let stopping = false;
  const stop = (signal?: NodeJS.Signals) => {
    if (stopping) process.exit(signal === "SIGINT" ? 130 : 143);
    stopping = true;
    err("gateway: stopping; running turns get agent.restart_drain_timeout (signal again to force)…");
    resolveStop();
    resolveEnd("stop");
  };
  const restart = () => resolveEnd("restart");
  const onUsr1 = () => restart();
  if (stopSignal) void stopSignal.then(() => stop());
  else {
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  }
  // Also replaces Node's default for SIGUSR1 (starting the inspector).
  process.on("SIGUSR1", onUsr1);
  return {
    ended,
    stopped,
    restart,
    dispose: () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      process.off("SIGUSR1", onUsr1);
    },
  };
}

/** Starts the next gateway of this home, detached (after this one released the home's lock). */
export function startSuccessor(home: string, profile: string | undefined): number | undefined {
  const logs = join(home, "logs");
  mkdirSync(logs, { recursive: true, mode: 0o700 });
  const out = openSync(join(logs, "gateway-output.log"), "a", 0o600);
  const bin = process.argv[1] ?? "hermes";
  try {
    const child = spawn(process.execPath, [bin, ...(profile ? ["-p", profile] : []), "gateway", "run"], {
      detached: true,
      stdio: ["ignore", out, out],
      env: process.env,
    });
    child.unref();
    return child.pid;
  } finally {
    closeSync(out);
  }
}
