/**
 * The Qwen CLI's own login (`~/.qwen/oauth_creds.json`), a credential source for `qwen-oauth` as
 * Python Hermes uses it: a user who ran `qwen` and logged in there needs no second login. The file
 * holds the Qwen CLI's fields (`access_token`, `refresh_token`, `token_type`, `resource_url`,
 * `expiry_date` in epoch ms); Hermes renews the token shortly before it expires (or after a 401)
 * and writes the renewed login back to the same file (0600, atomic, keys sorted as upstream writes
 * them, fields it does not know kept), so the Qwen CLI goes on with it too. A login of Hermes's
 * own in auth.json (`hermes auth add qwen-oauth --type oauth`) comes first; this file is read only
 * when there is none.
 *
 * Renewals run under a lock beside the file (`oauth_creds.json.lock`), on a fresh read: two
 * Hermes processes (or profiles) never spend one refresh token twice.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { atomicWriteFile } from "../../util/atomic-write.js";
import { withFileLock } from "../../util/file-lock.js";
import { qwenCredential, refreshQwen } from "./qwen.js";
import { type Env, isRecord, type OAuthCredential, type OAuthDeps, OAuthError } from "./types.js";

/** `~/.qwen/oauth_creds.json` of the user whose HOME is in `env` (else the OS's idea of it). */
export function qwenCliCredsPath(env: Env): string {
  const home = env["HOME"]?.trim() || homedir();
  return join(home, ".qwen", "oauth_creds.json");
}

/**
 * The Qwen CLI's login state, or undefined when the file does not exist. Throws `OAuthError` when
 * it exists but cannot be read or is not a JSON object (the message names the file).
 */
export function readQwenCliState(env: Env): Record<string, unknown> | undefined {
  const path = qwenCliCredsPath(env);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return undefined;
    throw new OAuthError(
      "qwen-oauth",
      `cannot read the Qwen CLI's login ${path} (${code ?? String(error)})`,
      {
        code: "qwen_auth_read_failed",
      },
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch {
    data = undefined;
  }
  if (!isRecord(data)) {
    throw new OAuthError(
      "qwen-oauth",
      `the Qwen CLI's login ${path} is not a JSON object; log in again with \`qwen\`, or with: hermes auth add qwen-oauth --type oauth`,
      { code: "qwen_auth_invalid", relogin: true },
    );
  }
  return data;
}

/** The credential the Qwen CLI's file holds now (no renewal), or undefined without a usable one. */
export function qwenCliCredential(env: Env): OAuthCredential | undefined {
  try {
    const state = readQwenCliState(env);
    return state ? qwenCredential(state, env) : undefined;
  } catch {
    return undefined;
  }
}

/** Writes a renewed login back (0600, atomic; keys sorted, as upstream's `_save_private_json`). */
async function writeQwenCliState(env: Env, state: Record<string, unknown>): Promise<void> {
  const sorted = Object.fromEntries(Object.entries(state).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  await atomicWriteFile(qwenCliCredsPath(env), `${JSON.stringify(sorted, null, 2)}\n`, { mode: 0o600 });
}

/** Whether `cred` may be sent now (see `CurrentOptions` in source.ts for `force`/`stale`). */
export type CredentialCheck = (cred: OAuthCredential | undefined) => boolean;

/**
 * The Qwen CLI's credential for a model call: the file's token while `usable` accepts it, else
 * renewed under the lock (re-read first: another process may have renewed it) and written back.
 * Throws `OAuthError` (`not_logged_in` when the file is gone).
 */
export async function currentQwenCliCredential(
  deps: OAuthDeps,
  usable: CredentialCheck,
): Promise<OAuthCredential> {
  const missing = () =>
    new OAuthError(
      "qwen-oauth",
      `no Qwen login: the Qwen CLI's ${qwenCliCredsPath(deps.env)} is gone; log in with \`qwen\`, or with: hermes auth add qwen-oauth --type oauth`,
      { code: "not_logged_in", relogin: true },
    );
  const state = readQwenCliState(deps.env);
  if (!state) throw missing();
  const cred = qwenCredential(state, deps.env);
  if (usable(cred) && cred) return cred;
  const path = qwenCliCredsPath(deps.env);
  return withFileLock(path, async () => {
    const fresh = readQwenCliState(deps.env);
    if (!fresh) throw missing();
    const now = qwenCredential(fresh, deps.env);
    if (usable(now) && now) return now;
    const renewed = await refreshQwen(fresh, deps);
    await writeQwenCliState(deps.env, renewed);
    const result = qwenCredential(renewed, deps.env);
    if (!result) throw missing();
    return result;
  });
}
