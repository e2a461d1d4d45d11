/**
 * Who is an admin in a chat: the tier that may run admin-only slash commands (`/model`, `/yolo`,
 * `/reload-mcp`, `/sethome`). Upstream keeps the list per platform in
 * `platforms.<platform>.extra.allow_admin_from`; `gateway.admin_users` names admins on every
 * platform (an entry may be `platform:id` to name one platform's user). Entries are user ids or
 * `@usernames` (matched case-insensitively), as a YAML list or a comma-separated string.
 *
 * With no admin configured for a platform every allowed user is an admin there, so a bot with
 * one owner behaves as it always did. Non-admins may still run the admin-only commands named in
 * `platforms.<platform>.extra.user_allowed_commands` or `gateway.user_allowed_commands`.
 */

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

function names(value: unknown): string[] {
  const raw = Array.isArray(value) ? value.map(String) : typeof value === "string" ? value.split(",") : [];
  return raw.map((s) => s.trim()).filter((s) => s !== "");
}

export interface ChatTier {
  isAdmin: boolean;
  /** Admin-only commands a non-admin may run here. */
  userAllowedCommands: string[];
}

export function chatTier(
  config: Record<string, unknown>,
  who: { platform: string; userId: string; userName?: string | undefined },
): ChatTier {
  const gateway = section(config["gateway"]);
  const extra = section(section(section(section(config["platforms"])[who.platform])["extra"]));
  const platformPrefix = `${who.platform.toLowerCase()}:`;
  const admins = [
    ...names(extra["allow_admin_from"]),
    ...names(gateway["admin_users"]).flatMap((entry) => {
      const colon = entry.indexOf(":");
      if (colon === -1) return [entry];
      return entry.toLowerCase().startsWith(platformPrefix) ? [entry.slice(colon + 1)] : [];
    }),
  ];
  const userAllowedCommands = [
    ...names(extra["user_allowed_commands"]),
    ...names(gateway["user_allowed_commands"]),
  ];
  if (admins.length === 0) return { isAdmin: true, userAllowedCommands };
  const handle = who.userName?.replace(/^@/, "").toLowerCase();
  const isAdmin = admins.some((entry) =>
    entry.startsWith("@")
      ? handle !== undefined && entry.slice(1).toLowerCase() === handle
      : entry === who.userId,
  );
  return { isAdmin, userAllowedCommands };
}
