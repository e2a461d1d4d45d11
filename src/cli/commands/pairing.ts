import { loadConfig } from "../../config/load.js";
import { openedOnUse } from "../../state/async-view.js";
import { stateBackendChoice } from "../../state/backend-config.js";
import {
  type PairingRecords,
  PairingStore,
  PairingUsageError,
  pairingRecords,
} from "../../state/gateway/pairing.js";
import { homeLogger, type Logger } from "../../util/log.js";
import { CliFailure, defineCommand, type RunOptions } from "../command.js";
import { renderTable } from "../format/table.js";
import type { CliIo } from "../io.js";

export type PairingCommandOptions = RunOptions;

/** Runs `hermes pairing <argv…>` and returns the exit code. Never throws for expected failures. */
export function runPairingCommand(
  argv: readonly string[],
  options: PairingCommandOptions = {},
): Promise<number> {
  return pairingCommand.run(argv, options);
}

/** What the pairing actions work on. Approvals and revocations go to gateway.log. */
interface Ctx {
  io: CliIo;
  store: PairingRecords;
  log: Logger;
}

export const pairingCommand = defineCommand({
  name: "pairing",
  description: "approve, list and revoke users who paired with the gateway through a DM code",
  needs: "home",
  defaultSubcommand: "list",
  open: ({ home, io }): Ctx => ({
    io,
    store: pairingOf(home, io),
    log: pairingLogger(home, io.env),
  }),
  // An unreadable pairing file (PairingFileError) and a lock held too long are failures (1).
  expected: (error) => (error instanceof PairingUsageError ? 2 : undefined),
  parse: (root, run) => {
    root
      .command("approve")
      .description("approve the user who was sent CODE on PLATFORM")
      .argument("<platform>", "telegram, discord, slack, ...")
      .argument("<code>", "the 8-character code the user received")
      .action(
        run(({ io, store, log }, platform: string, code: string) => approve(io, store, platform, code, log)),
      );

    root
      .command("list")
      .alias("ls")
      .description("pending pairing requests and approved users")
      .option("--json", "print JSON")
      .action(run(({ io, store }, flags: { json?: boolean }) => list(io, store, flags)));

    root
      .command("revoke")
      .description("take away a paired user's access")
      .argument("<platform>", "telegram, discord, slack, ...")
      .argument("<user>", "the user's id as shown by `hermes pairing list`")
      .action(
        run(({ io, store, log }, platform: string, user: string) => revoke(io, store, platform, user, log)),
      );

    root
      .command("clear-pending")
      .description("drop pending pairing requests (of one platform, or all)")
      .argument("[platform]", "only this platform")
      .action(run(({ io, store }, platform: string | undefined) => clearPending(io, store, platform)));
  },
});

const minutesUntil = (io: CliIo, at: number): number => Math.max(1, Math.ceil((at - io.now()) / 60));

/**
 * The home's pairing store: the files (on the command's clock) for a SQLite home, the PostgreSQL
 * backend's for a postgres one (opened on first use; the process ends after the command).
 */
function pairingOf(home: string, io: CliIo): PairingRecords {
  let config: ReturnType<typeof loadConfig>["config"] | undefined;
  try {
    config = loadConfig({ home, env: io.env }).config;
  } catch {
    // A broken config.yaml must not stop the owner from approving someone (on the files).
  }
  if (!config || stateBackendChoice(config.state, { ...io.env }).kind === "sqlite") {
    return pairingRecords(new PairingStore({ home, now: () => io.now() }));
  }
  const chosen = config;
  return openedOnUse(async () => {
    const { openStateBackend } = await import("../../knowledge/state-backend.js");
    return (await openStateBackend(home, chosen, { env: io.env })).pairing;
  }, [
    "requestCode",
    "approve",
    "list",
    "listApproved",
    "revoke",
    "deny",
    "clearPending",
    "isApproved",
    "approvedIds",
  ]);
}

/** The home's logger (`logging:` of config.yaml; its defaults when the file cannot be read). */
function pairingLogger(home: string, env: Record<string, string | undefined>): Logger {
  let section: unknown;
  try {
    section = loadConfig({ home, env }).config.logging;
  } catch {
    // A broken config.yaml must not stop the owner from approving someone.
  }
  return homeLogger(home, section, { component: "gateway.pairing" });
}

async function approve(
  io: CliIo,
  store: PairingRecords,
  platform: string,
  code: string,
  log: Logger,
): Promise<number> {
  const result = await store.approve(platform, code);
  if (result.status === "approved") {
    log.info("user approved", { platform: result.platform, user: result.userId });
  } else {
    log.warning(
      result.status === "locked_out" ? "approval refused: locked out" : "approval with a wrong code",
      {
        platform,
        locked_out: result.status === "invalid" && result.lockedOutUntil !== undefined ? true : undefined,
      },
    );
  }
  switch (result.status) {
    case "approved": {
      const who = result.userName ? `${result.userName} (${result.userId})` : result.userId;
      io.out(`Approved ${who} on ${result.platform}; they can talk to the agent from their next message.`);
      return 0;
    }
    case "locked_out":
      throw new CliFailure(
        `approvals on ${platform} are locked for ${minutesUntil(io, result.until)} more min after ` +
          "too many wrong codes; wait, then ask the user for a fresh code.",
      );
    case "invalid": {
      const tail =
        result.lockedOutUntil !== undefined
          ? `That was the last attempt: approvals on ${platform} are now locked for 60 min.`
          : `Check it with the user, or run \`hermes pairing list\` (${result.attemptsLeft} attempt(s) left before a 1 h lockout).`;
      throw new CliFailure(
        `no pending request on ${platform} matches that code (codes expire after 1 h). ${tail}`,
      );
    }
  }
}

async function list(io: CliIo, store: PairingRecords, flags: { json?: boolean }): Promise<number> {
  const { pending, approved } = await store.list();
  if (flags.json) {
    io.out(JSON.stringify({ pending, approved }, null, 2));
    return 0;
  }
  if (pending.length === 0 && approved.length === 0) {
    io.out("No pairing requests and no paired users.");
    return 0;
  }
  const now = io.now();
  if (pending.length > 0) {
    io.out(`Pending requests (${pending.length}):`);
    const rows = pending.map((r) => [
      r.platform,
      r.userId,
      r.userName,
      `${Math.floor((now - r.createdAt) / 60)} min ago`,
      `${Math.max(0, Math.ceil((r.expiresAt - now) / 60))} min`,
    ]);
    const table = renderTable(
      [
        { header: "Platform" },
        { header: "User ID" },
        { header: "Name", flex: true },
        { header: "Asked" },
        { header: "Expires in" },
      ],
      rows,
      io.width !== undefined ? { width: io.width } : {},
    );
    for (const line of table) io.out(line);
  } else {
    io.out("No pending requests.");
  }
  io.out("");
  if (approved.length > 0) {
    io.out(`Approved users (${approved.length}):`);
    const rows = approved.map((a) => [
      a.platform,
      a.userId,
      a.userName,
      a.approvedAt !== undefined
        ? new Date(a.approvedAt * 1000).toISOString().slice(0, 16).replace("T", " ")
        : "",
    ]);
    const table = renderTable(
      [
        { header: "Platform" },
        { header: "User ID" },
        { header: "Name", flex: true },
        { header: "Approved (UTC)" },
      ],
      rows,
      io.width !== undefined ? { width: io.width } : {},
    );
    for (const line of table) io.out(line);
  } else {
    io.out("No approved users.");
  }
  return 0;
}

async function revoke(
  io: CliIo,
  store: PairingRecords,
  platform: string,
  user: string,
  log: Logger,
): Promise<number> {
  if (await store.revoke(platform, user)) {
    log.info("user revoked", { platform: platform.trim().toLowerCase(), user });
    io.out(`Revoked ${user} on ${platform.trim().toLowerCase()}.`);
    return 0;
  }
  throw new CliFailure(
    `${user} is not a paired user on ${platform}; run \`hermes pairing list\` to see who is. ` +
      "(Users admitted by an *_ALLOWED_USERS list are removed from that list in .env instead.)",
  );
}

async function clearPending(io: CliIo, store: PairingRecords, platform: string | undefined): Promise<number> {
  const count = await store.clearPending(platform);
  const where = platform ? ` on ${platform.trim().toLowerCase()}` : "";
  io.out(count ? `Cleared ${count} pending request(s)${where}.` : `No pending requests${where}.`);
  return 0;
}
