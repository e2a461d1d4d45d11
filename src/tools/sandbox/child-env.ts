/**
 * The environment of an `execute_code` script: the session's environment minus anything that
 * looks like a credential, minus Hermes's own settings, plus what the generated module needs.
 * The script reaches tools only through the RPC socket, so it never needs a key itself.
 */
import { delimiter } from "node:path";

/** Names the socket path for the generated `hermes_tools` modules. */
export const RPC_SOCKET_ENV = "HERMES_RPC_SOCKET";

/** A name containing any of these (any case) is treated as a credential and never passed on. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|PASSWD|AUTH/i;

/**
 * The `HERMES_*` variables a script keeps. HERMES_HOME is a path, not a secret, and scripts that
 * handle files the model knows by their place in the home (skills, memories, logs) need it.
 * Every other HERMES_* variable configures the agent itself (yolo mode, model, limits) and has no
 * meaning for a script, so it is dropped rather than leaked.
 */
const HERMES_ALLOWED = new Set(["HERMES_HOME"]);

/**
 * Pure: copies `env` without credential-like names (KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL,
 * PASSWD, AUTH anywhere in the name, any case), without `HERMES_*` other than HERMES_HOME, and
 * without undefined values. Everything else (PATH, HOME, LANG, TMPDIR, VIRTUAL_ENV...) is kept.
 */
export function filterChildEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (SECRET_NAME.test(name)) continue;
    if (name.toUpperCase().startsWith("HERMES_") && !HERMES_ALLOWED.has(name.toUpperCase())) continue;
    out[name] = value;
  }
  return out;
}

/**
 * The full environment of a script run: `filterChildEnv(env)` plus the socket path, the folder of
 * the generated modules on PYTHONPATH and NODE_PATH (ahead of any existing entries), unbuffered
 * UTF-8 Python output (so prints survive a kill and non-ASCII text never fails on a C locale) and
 * no `.pyc` files left behind.
 */
export function buildChildEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: { socketPath: string; moduleDir: string },
): Record<string, string> {
  const out = filterChildEnv(env);
  const prepend = (current: string | undefined) =>
    current ? `${options.moduleDir}${delimiter}${current}` : options.moduleDir;
  out.PYTHONPATH = prepend(out.PYTHONPATH);
  out.NODE_PATH = prepend(out.NODE_PATH);
  out.PYTHONDONTWRITEBYTECODE = "1";
  out.PYTHONUNBUFFERED = "1";
  out.PYTHONIOENCODING = "utf-8";
  out[RPC_SOCKET_ENV] = options.socketPath;
  return out;
}
