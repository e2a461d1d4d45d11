/**
 * Who may talk to the gateway: a pure decision over the environment and the set of users approved
 * through DM pairing. The order is Hermes's (`gateway/authz_mixin.py`):
 *
 *   1. `<PLATFORM>_ALLOW_ALL_USERS` is true            → allowed (allow_all)
 *   2. the user was approved by DM pairing             → allowed (pairing)
 *   3. `<PLATFORM>_ALLOWED_USERS` names the user        → allowed (allowlist)
 *   4. `GATEWAY_ALLOWED_USERS` names the user           → allowed (allowlist)
 *   5. `GATEWAY_ALLOW_ALL_USERS` is true                → allowed (allow_all)
 *   6. otherwise denied; an unknown user in a DM may ask for a pairing code, one in a group or
 *      channel is ignored (answering there would leak that the bot exists and spam the room).
 *
 * Allowlists are comma-separated ids or `@usernames` (usernames match case-insensitively); `*`
 * admits everyone.
 */

export type Env = Readonly<Record<string, string | undefined>>;

export interface AuthSubject {
  /** Platform value as Hermes spells it (`telegram`, `discord`, `whatsapp_cloud`, ...). */
  platform: string;
  userId: string;
  /** Handle without or with a leading `@`, when the platform has one. */
  userName?: string | undefined;
  isDm: boolean;
}

export interface AuthContext {
  env: Env;
  /** User ids approved through DM pairing on this subject's platform. */
  approved: ReadonlySet<string>;
  /** `unauthorized_dm_behavior` from config.yaml: `pair` (default) offers a code, `ignore` does not. */
  unauthorizedDm?: "pair" | "ignore";
}

export type AuthDecision =
  | { allowed: true; via: "allowlist" | "pairing" | "allow_all" }
  | { allowed: false; pairing: boolean };

/** Platforms whose env prefix is not simply their upper-cased name. */
const ENV_PREFIX_OVERRIDES: Readonly<Record<string, string>> = { qqbot: "QQ" };

/** The env prefix for a platform: `telegram` → `TELEGRAM`, `whatsapp_cloud` → `WHATSAPP_CLOUD`. */
export function platformEnvPrefix(platform: string): string {
  const p = platform.trim().toLowerCase();
  return ENV_PREFIX_OVERRIDES[p] ?? p.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
}

/** Whether an env flag is on (`true`, `1`, `yes`, `on`, any case). Unset or anything else is off. */
export function envFlag(value: string | undefined): boolean {
  return ["true", "1", "yes", "on"].includes((value ?? "").trim().toLowerCase());
}

/** Splits a comma-separated allowlist, dropping blanks. */
export function parseAllowlist(raw: string | undefined): string[] {
  return (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const bareName = (name: string): string => name.trim().replace(/^@+/, "").toLowerCase();

/** Whether an allowlist entry names the user: `*`, the exact id, or `@name` against the handle. */
export function allowlistMatches(entries: readonly string[], userId: string, userName?: string): boolean {
  const handle = userName ? bareName(userName) : "";
  return entries.some((entry) => {
    if (entry === "*") return true;
    if (entry.startsWith("@")) return handle !== "" && bareName(entry) === handle;
    // Email addresses compare without case (Alice@Example.com is alice@example.com).
    if (entry.includes("@")) return entry.toLowerCase() === userId.toLowerCase();
    return entry === userId;
  });
}

/**
 * Platforms where a stranger is ignored unless config says otherwise (upstream's email default:
 * anyone can write to a mailbox, and a pairing code mailed back to a forged or spam sender would be
 * backscatter).
 */
const QUIET_BY_DEFAULT: ReadonlySet<string> = new Set(["email", "homeassistant"]);

/**
 * `unauthorized_dm_behavior` for one platform: `<PLATFORM>_UNAUTHORIZED_DM_BEHAVIOR` in the
 * environment, then `platforms.<name>.unauthorized_dm_behavior`, then the top-level key, then the
 * platform's default (`ignore` for email, else `pair`).
 */
export function unauthorizedDmBehavior(
  platform: string,
  config: Readonly<Record<string, unknown>>,
  env: Env,
): "pair" | "ignore" {
  const read = (value: unknown): "pair" | "ignore" | undefined => {
    const v = String(value ?? "")
      .trim()
      .toLowerCase();
    return v === "ignore"
      ? "ignore"
      : v === "pair" || v === "pair_request" || v === "reply"
        ? "pair"
        : undefined;
  };
  const platforms = config["platforms"];
  const section =
    platforms && typeof platforms === "object" ? (platforms as Record<string, unknown>)[platform] : undefined;
  return (
    read(env[`${platformEnvPrefix(platform)}_UNAUTHORIZED_DM_BEHAVIOR`]) ??
    read(
      section && typeof section === "object"
        ? (section as Record<string, unknown>)["unauthorized_dm_behavior"]
        : undefined,
    ) ??
    read(config["unauthorized_dm_behavior"]) ??
    (QUIET_BY_DEFAULT.has(platform) ? "ignore" : "pair")
  );
}

/** Decides whether a message sender may talk to the agent. Pure; deny by default. */
export function authorize(subject: AuthSubject, ctx: AuthContext): AuthDecision {
  const prefix = platformEnvPrefix(subject.platform);
  const { env } = ctx;
  if (envFlag(env[`${prefix}_ALLOW_ALL_USERS`])) return { allowed: true, via: "allow_all" };
  // Home Assistant's own events (state changes, automations) come from the server the token
  // trusts, as upstream lets them through; an HA user's conversation input is checked below.
  if (subject.platform === "homeassistant" && subject.userId === "homeassistant") {
    return { allowed: true, via: "allow_all" };
  }
  if (subject.userId && ctx.approved.has(subject.userId)) return { allowed: true, via: "pairing" };
  for (const name of [`${prefix}_ALLOWED_USERS`, "GATEWAY_ALLOWED_USERS"]) {
    if (allowlistMatches(parseAllowlist(env[name]), subject.userId, subject.userName)) {
      return { allowed: true, via: "allowlist" };
    }
  }
  if (envFlag(env["GATEWAY_ALLOW_ALL_USERS"])) return { allowed: true, via: "allow_all" };
  return { allowed: false, pairing: subject.isDm && (ctx.unauthorizedDm ?? "pair") === "pair" };
}
