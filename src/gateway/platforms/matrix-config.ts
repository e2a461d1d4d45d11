/**
 * The Matrix adapter's settings, from the environment (upstream's `MATRIX_*` names) and the
 * `matrix:` section of config.yaml; the environment wins. Pure: no I/O.
 */
import { envFlag, parseAllowlist } from "../../state/gateway/allowlist.js";

export type MatrixE2eeMode = "off" | "optional" | "required";

export interface MatrixSettings {
  /** Homeserver base URL without a trailing slash. */
  homeserver: string;
  accessToken: string | undefined;
  /** `@bot:server`; required for a password login, read from `whoami` for a token. */
  userId: string | undefined;
  password: string | undefined;
  /** A device id to log in as (password login) so the server keeps one device across restarts. */
  deviceId: string | undefined;
  e2ee: MatrixE2eeMode;
  /** Rooms need an @mention before the bot answers (DMs never do). Default true, as upstream. */
  requireMention: boolean;
  /** Rooms where the bot answers without a mention. */
  freeResponseRooms: readonly string[];
  /** When set, the only rooms (DMs apart) the bot answers in. */
  allowedRooms: readonly string[];
  /** A room message that is not in a thread starts one, rooted at the message (default true). */
  autoThread: boolean;
  /** The same in DMs (default false). */
  dmAutoThread: boolean;
  /** 👀 while working, then ✅ or ❌ (default true). */
  reactions: boolean;
  /** `m.notice` messages are bot output; handled only when asked (default false). */
  processNotices: boolean;
  /** Senders (regular expressions) never handled: bridge and appservice ghost users. */
  ignoreUserPatterns: readonly RegExp[];
}

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

const list = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.map((v) => String(v).trim()).filter(Boolean)
    : typeof value === "string"
      ? parseAllowlist(value)
      : [];

const str = (value: string | undefined): string | undefined => (value?.trim() ? value.trim() : undefined);

/**
 * Reads the settings. `MATRIX_E2EE_MODE` (`off|optional|required`) wins over the older
 * `MATRIX_ENCRYPTION=true` (which means `required`, as upstream maps it).
 */
export function matrixSettings(
  env: Readonly<Record<string, string | undefined>>,
  rawSettings: Readonly<Record<string, unknown>>,
): MatrixSettings {
  const settings = section(rawSettings);
  const flag = (name: string, key: string, fallback: boolean): boolean => {
    const fromEnv = env[name];
    if (fromEnv !== undefined && fromEnv.trim() !== "") return envFlag(fromEnv);
    const value = settings[key];
    if (typeof value === "boolean") return value;
    if (typeof value === "string") return envFlag(value);
    return fallback;
  };
  const rooms = (name: string, key: string): string[] =>
    env[name]?.trim() ? parseAllowlist(env[name]) : list(settings[key]);
  const mode = str(env["MATRIX_E2EE_MODE"])?.toLowerCase();
  const e2ee: MatrixE2eeMode =
    mode === "off" || mode === "optional" || mode === "required"
      ? mode
      : envFlag(env["MATRIX_ENCRYPTION"]) || settings["encryption"] === true
        ? "required"
        : "off";
  const patterns: RegExp[] = [];
  for (const source of parseAllowlist(env["MATRIX_IGNORE_USER_PATTERNS"])) {
    try {
      patterns.push(new RegExp(source));
    } catch {
      // A broken pattern must not silence everyone; it is reported by connect.
    }
  }
  return {
    homeserver: (
      str(env["MATRIX_HOMESERVER"]) ??
      (typeof settings["homeserver"] === "string" ? settings["homeserver"] : "")
    ).replace(/\/+$/, ""),
    accessToken: str(env["MATRIX_ACCESS_TOKEN"]),
    userId:
      str(env["MATRIX_USER_ID"]) ??
      (typeof settings["user_id"] === "string" ? settings["user_id"] : undefined),
    password: str(env["MATRIX_PASSWORD"]),
    deviceId: str(env["MATRIX_DEVICE_ID"]),
    e2ee,
    requireMention: flag("MATRIX_REQUIRE_MENTION", "require_mention", true),
    freeResponseRooms: rooms("MATRIX_FREE_RESPONSE_ROOMS", "free_response_rooms"),
    allowedRooms: rooms("MATRIX_ALLOWED_ROOMS", "allowed_rooms"),
    autoThread: flag("MATRIX_AUTO_THREAD", "auto_thread", true),
    dmAutoThread: flag("MATRIX_DM_AUTO_THREAD", "dm_auto_thread", false),
    reactions: flag("MATRIX_REACTIONS", "reactions", true),
    processNotices: flag("MATRIX_PROCESS_NOTICES", "process_notices", false),
    ignoreUserPatterns: patterns,
  };
}

/** What is missing to log in, as a message naming the variables to set; undefined when complete. */
export function matrixLoginProblem(s: MatrixSettings): string | undefined {
  if (!s.homeserver) return "MATRIX_HOMESERVER is not set (e.g. https://matrix.example.org)";
  if (!/^https?:\/\//i.test(s.homeserver)) {
    return `MATRIX_HOMESERVER must be an http(s) URL, got "${s.homeserver}"`;
  }
  if (s.accessToken) return undefined;
  if (!s.password) {
    return "set MATRIX_ACCESS_TOKEN, or MATRIX_USER_ID and MATRIX_PASSWORD, in the .env file of your Hermes home";
  }
  if (!s.userId)
    return "MATRIX_PASSWORD is set but MATRIX_USER_ID is not: add MATRIX_USER_ID=@bot:your.server";
  return undefined;
}
