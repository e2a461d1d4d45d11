import { createInterface } from "node:readline/promises";
import { InvalidArgumentError } from "commander";
import pc from "picocolors";
import { sessionStorePath } from "../../state/sqlite-store.js";
import { type SessionRecord, type SessionStore, SessionStoreError } from "../../state/types.js";
import { CliFailure, defineCommand, type RunOptions } from "../command.js";
import { exportLine, writeJsonlFile } from "../format/session-export.js";
import { highlight, sessionHeader, transcript } from "../format/session-view.js";
import { renderTable } from "../format/table.js";
import { formatBytes, formatCount, formatDateTime, relativeTime } from "../format/time.js";
import type { CliIo } from "../io.js";
import { registerHomeSecrets } from "../secrets.js";
import { openHomeSessions } from "./home-sessions.js";
import { recoverFromFile } from "./sessions-recover.js";

export type SessionsCommandOptions = RunOptions;

type Io = CliIo;

const NO_SESSIONS = "No sessions yet.";

/** Runs `hermes sessions <argv…>` and returns the exit code. Never throws for expected failures. */
export function runSessionsCommand(
  argv: readonly string[],
  options: SessionsCommandOptions = {},
): Promise<number> {
  return sessionsCommand.run(argv, options);
}

function count(value: string, what: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new InvalidArgumentError(`${what} expects a whole number of at least ${min}, got "${value}".`);
  }
  return n;
}

export const sessionsCommand = defineCommand({
  name: "sessions",
  description: "Manage recorded sessions (state.db)",
  needs: "home",
  defaultSubcommand: "list",
  expected: (error) => (error instanceof SessionStoreError ? 1 : undefined),
  parse: (root, run) => {
    root
      .command("list")
      .description("list sessions, most recently active first")
      .option("--source <source>", "only sessions from this source (cli, telegram, cron, …)")
      .option("--limit <n>", "how many to show", (v) => count(v, "--limit", 1), 20)
      .option("--all", "also list subagent sessions (otherwise counted under their parent)")
      .option("--json", "print JSON")
      .action(
        run(({ home, io }, flags: { source?: string; limit: number; all?: boolean; json?: boolean }) =>
          list(home, flags, io),
        ),
      );

    root
      .command("show")
      .description("print one session: header and transcript")
      .argument("<ref>", "session id, unique id prefix, or title")
      .option("--json", "print JSON: {session, messages}")
      .action(run(({ home, io }, ref: string, flags: { json?: boolean }) => show(home, ref, flags, io)));

    root
      .command("search")
      .description("full-text search over past messages")
      .argument("<query...>", 'words to find, all required; "a phrase", prefix*, OR and NOT work')
      .option("--limit <n>", "most hits to show", (v) => count(v, "--limit", 1), 20)
      .option("--source <source>", "only sessions from this source")
      .option("--json", "print JSON")
      .action(
        run(({ home, io }, words: string[], flags: { limit: number; source?: string; json?: boolean }) =>
          search(home, words.join(" "), flags, io),
        ),
      );

    root
      .command("export")
      .description("write sessions with their messages as JSONL, one session per line")
      .argument("<out>", 'output file, or "-" for stdout')
      .option("--session-id <ref>", "only this session")
      .option("--source <source>", "only sessions from this source")
      .action(
        run(({ home, io }, out: string, flags: { sessionId?: string; source?: string }) =>
          exportSessions(home, out, flags, io),
        ),
      );

    root
      .command("delete")
      .description("delete a session and its messages")
      .argument("<ref>", "session id, unique id prefix, or title")
      .option("-y, --yes", "do not ask for confirmation")
      .action(run(({ home, io }, ref: string, flags: { yes?: boolean }) => remove(home, ref, flags, io)));

    root
      .command("prune")
      .description("delete ended sessions older than a number of days")
      .option("--older-than <days>", "age in days", (v) => count(v, "--older-than", 0), 90)
      .option("--source <source>", "only sessions from this source")
      .option("-y, --yes", "do not ask for confirmation")
      .action(
        run(({ home, io }, flags: { olderThan: number; source?: string; yes?: boolean }) =>
          prune(home, flags, io),
        ),
      );

    root
      .command("rename")
      .description('set a session\'s title ("" clears it)')
      .argument("<ref>", "session id, unique id prefix, or title")
      .argument("<title...>", "the new title")
      .action(run(({ home, io }, ref: string, words: string[]) => rename(home, ref, words.join(" "), io)));

    root
      .command("stats")
      .description("counts, sources, size and search index of the store")
      .option("--json", "print JSON")
      .action(run(({ home, io }, flags: { json?: boolean }) => stats(home, flags, io)));

    root
      .command("optimize")
      .description("merge the search index and VACUUM the database")
      .action(run(({ home, io }) => optimize(home, io)));

    root
      .command("repair")
      .description("check the database and fix what can be fixed in place")
      .option("--check", "only check; change nothing")
      .option(
        "--from <file>",
        "recover sessions from another or damaged state.db (state.db.corrupt-*) or a state-unsaved-*.jsonl file",
      )
      .option("--json", "with --from: print the counts as JSON")
      .action(
        run(({ home, io }, flags: { check?: boolean; from?: string; json?: boolean }) => {
          if (flags.from === undefined) return repair(home, flags, io);
          if (flags.check) throw new CliFailure("--check and --from cannot be combined.", 2);
          return recoverFromFile(home, flags.from, flags, io);
        }),
      );
  },
});

async function withStore<T>(
  home: string,
  readonly: boolean,
  body: (store: SessionStore) => Promise<T>,
  missing: () => T,
): Promise<T> {
  // state.db, or the shared PostgreSQL database when the home's config names one.
  const store = await openHomeSessions(home, { readonly });
  if (!store) return missing();
  try {
    return await body(store);
  } finally {
    await store.close();
  }
}

function noSessions(io: Io, json: boolean | undefined, empty: unknown = []): number {
  io.out(json ? JSON.stringify(empty) : NO_SESSIONS);
  return 0;
}

async function resolveRef(store: SessionStore, ref: string): Promise<SessionRecord> {
  try {
    return await store.resolveSession(ref);
  } catch (error) {
    if (error instanceof SessionStoreError && error.code === "not_found") {
      throw new CliFailure(`No session matches "${ref}". Try \`hermes sessions list\`.`);
    }
    throw error;
  }
}

function paint(io: Io, fn: (s: string) => string): ((s: string) => string) | undefined {
  return io.color ? fn : undefined;
}

function style(io: Io, fn: (s: string) => string, text: string): string {
  return io.color ? fn(text) : text;
}

/** Subagent sessions are listed under their parent's row unless `--all` (or `--source subagent`). */
const SUBAGENT_SOURCE = "subagent";

async function list(
  home: string,
  flags: { source?: string; limit: number; all?: boolean; json?: boolean },
  io: Io,
): Promise<number> {
  return withStore(
    home,
    true,
    async (store) => {
      const hideChildren = !flags.all && flags.source === undefined;
      const sessions = await store.listSessions({
        limit: flags.limit,
        ...(flags.source ? { source: flags.source } : {}),
        ...(hideChildren ? { excludeSources: [SUBAGENT_SOURCE] } : {}),
      });
      const childCounts = await Promise.all(
        sessions.map(async (s) =>
          hideChildren
            ? (await store.listSessions({ parentSessionId: s.id, source: SUBAGENT_SOURCE, limit: 1000 }))
                .length
            : 0,
        ),
      );
      if (flags.json) {
        io.out(JSON.stringify(sessions, null, 2));
        return 0;
      }
      if (sessions.length === 0) {
        io.out(flags.source ? `No sessions from source "${flags.source}".` : NO_SESSIONS);
        return 0;
      }
      const now = io.now();
      const lines = renderTable(
        [
          { header: "ID", paint: paint(io, pc.cyan) },
          { header: "TITLE", max: 28 },
          { header: "SOURCE", max: 12 },
          { header: "MODEL", max: 24, paint: paint(io, pc.dim) },
          { header: "MSGS", align: "right" },
          { header: "ACTIVE", max: 12 },
          { header: "PREVIEW", flex: true, paint: paint(io, pc.dim) },
        ],
        sessions.flatMap((s, i) => {
          const row = [
            s.id,
            s.title ?? "—",
            s.source,
            s.model ?? "—",
            String(s.messageCount),
            relativeTime(s.lastActiveAt, now),
            s.preview,
          ];
          const children = childCounts[i] ?? 0;
          if (children === 0) return [row];
          const label = `└ ${children} subagent${children === 1 ? "" : "s"}`;
          return [row, [label, "", "", "", "", "", "(hermes sessions list --all)"]];
        }),
        { ...(io.width ? { width: io.width } : {}), ...(io.color ? { paintHeader: pc.bold } : {}) },
      );
      io.out(lines.join("\n"));
      if (sessions.length === flags.limit) {
        io.err(`(the ${flags.limit} most recent; pass --limit N to see more)`);
      }
      return 0;
    },
    () => noSessions(io, flags.json),
  );
}

async function show(home: string, ref: string, flags: { json?: boolean }, io: Io): Promise<number> {
  return withStore(
    home,
    true,
    async (store) => {
      const session = await resolveRef(store, ref);
      const messages = await store.getMessages(session.id);
      if (flags.json) {
        io.out(JSON.stringify({ session, messages }, null, 2));
        return 0;
      }
      const view = { color: io.color, now: io.now() };
      io.out([...sessionHeader(session, view), "", ...transcript(messages, view)].join("\n"));
      return 0;
    },
    () => {
      throw new CliFailure(`${NO_SESSIONS} No session matches "${ref}".`);
    },
  );
}

async function search(
  home: string,
  query: string,
  flags: { limit: number; source?: string; json?: boolean },
  io: Io,
): Promise<number> {
  return withStore(
    home,
    true,
    async (store) => {
      const hits = await store.search({
        query,
        limit: Math.min(flags.limit, 100),
        ...(flags.source ? { source: flags.source } : {}),
      });
      if (flags.json) {
        io.out(JSON.stringify(hits, null, 2));
        return 0;
      }
      if (hits.length === 0) {
        io.out(`No messages match "${query}".`);
        return 0;
      }
      const blocks = hits.map((hit) => {
        const head = [
          style(io, pc.cyan, hit.sessionId),
          hit.sessionTitle ? `"${hit.sessionTitle}"` : style(io, pc.dim, "(untitled)"),
          style(
            io,
            pc.dim,
            `${formatDateTime(hit.timestamp)} · ${hit.source} · ${hit.role} #${hit.messageId}`,
          ),
        ].join("  ");
        return `${head}\n    ${highlight(hit.snippet, io)}`;
      });
      io.out(blocks.join("\n\n"));
      return 0;
    },
    () => noSessions(io, flags.json),
  );
}

async function exportSessions(
  home: string,
  out: string,
  flags: { sessionId?: string; source?: string },
  io: Io,
): Promise<number> {
  // Rows written before redaction existed (or by another program) may hold the home's secrets.
  registerHomeSecrets(home, io.env);
  return withStore(
    home,
    true,
    async (store) => {
      const filter: { sessionId?: string; source?: string } = {};
      if (flags.sessionId) filter.sessionId = (await resolveRef(store, flags.sessionId)).id;
      if (flags.source) filter.source = flags.source;
      const sessions = store.exportSessions(filter);
      if (out === "-") {
        let n = 0;
        for await (const exported of sessions) {
          io.stdout.write(`${exportLine(exported)}\n`);
          n++;
        }
        io.err(`Exported ${n} session${n === 1 ? "" : "s"}.`);
        return 0;
      }
      let n: number;
      try {
        n = await writeJsonlFile(out, sessions);
      } catch (error) {
        if (error instanceof SessionStoreError) throw error;
        throw new CliFailure(
          `could not write ${out}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      io.out(`Exported ${n} session${n === 1 ? "" : "s"} to ${out}`);
      return 0;
    },
    () => {
      if (flags.sessionId) throw new CliFailure(`${NO_SESSIONS} No session matches "${flags.sessionId}".`);
      io.err(`${NO_SESSIONS} Nothing to export.`);
      return 0;
    },
  );
}

/**
 * Asks on the terminal; without one, refuses with exit 2 so a script never deletes by accident.
 * Returns false when the user declines.
 */
async function confirm(question: string, action: string, yes: boolean | undefined, io: Io): Promise<boolean> {
  if (yes) return true;
  if (io.stdin.isTTY !== true) {
    throw new CliFailure(`${action} needs confirmation and stdin is not a terminal; pass -y to confirm.`, 2);
  }
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

async function remove(home: string, ref: string, flags: { yes?: boolean }, io: Io): Promise<number> {
  return withStore(
    home,
    false,
    async (store) => {
      const session = await resolveRef(store, ref);
      const label = `${session.id}${session.title ? ` "${session.title}"` : ""}`;
      const ok = await confirm(
        `Delete 1 session (${label}, ${session.messageCount} messages)?`,
        "delete",
        flags.yes,
        io,
      );
      if (!ok) {
        io.err("Cancelled; nothing deleted.");
        return 0;
      }
      const { messages } = await store.deleteSession(session.id);
      io.out(`Deleted session ${label} (${messages} message${messages === 1 ? "" : "s"}).`);
      return 0;
    },
    () => {
      throw new CliFailure(`${NO_SESSIONS} No session matches "${ref}".`);
    },
  );
}

async function prune(
  home: string,
  flags: { olderThan: number; source?: string; yes?: boolean },
  io: Io,
): Promise<number> {
  return withStore(
    home,
    false,
    async (store) => {
      const filter = { olderThanDays: flags.olderThan, ...(flags.source ? { source: flags.source } : {}) };
      const from = flags.source ? ` from ${flags.source}` : "";
      const candidates = await store.prunable(filter);
      if (candidates.length === 0) {
        io.out(`No ended sessions${from} older than ${flags.olderThan} days; nothing to prune.`);
        return 0;
      }
      const n = candidates.length;
      const ok = await confirm(
        `Delete ${n} session${n === 1 ? "" : "s"}${from} older than ${flags.olderThan} days?`,
        "prune",
        flags.yes,
        io,
      );
      if (!ok) {
        io.err("Cancelled; nothing deleted.");
        return 0;
      }
      const result = await store.prune(filter);
      io.out(
        `Pruned ${result.sessions} session${result.sessions === 1 ? "" : "s"} (${result.messages} message${result.messages === 1 ? "" : "s"}).`,
      );
      return 0;
    },
    () => {
      io.out(`${NO_SESSIONS} Nothing to prune.`);
      return 0;
    },
  );
}

async function rename(home: string, ref: string, title: string, io: Io): Promise<number> {
  return withStore(
    home,
    false,
    async (store) => {
      const session = await resolveRef(store, ref);
      const trimmed = title.trim();
      await store.setTitle(session.id, trimmed === "" ? null : trimmed);
      io.out(
        trimmed === "" ? `Cleared the title of ${session.id}.` : `Renamed ${session.id} to "${trimmed}".`,
      );
      return 0;
    },
    () => {
      throw new CliFailure(`${NO_SESSIONS} No session matches "${ref}".`);
    },
  );
}

async function stats(home: string, flags: { json?: boolean }, io: Io): Promise<number> {
  return withStore(
    home,
    true,
    async (store) => {
      const s = await store.stats();
      if (flags.json) {
        io.out(JSON.stringify({ path: store.path, ...s }, null, 2));
        return 0;
      }
      const sources = Object.entries(s.bySource)
        .sort((a, b) => b[1] - a[1])
        .map(([source, n]) => `${source} ${formatCount(n)}`)
        .join(", ");
      const row = (label: string, value: string) => `${style(io, pc.dim, label.padEnd(10))} ${value}`;
      const lines = [
        row("Sessions", `${formatCount(s.sessions)}${sources ? `  (${sources})` : ""}`),
        row("Messages", formatCount(s.messages)),
        row("Database", `${store.path}  ${formatBytes(s.bytes)}`),
        row("Search", s.fts ? `full-text index${s.trigram ? " + trigram" : ""}` : "no full-text index"),
        row("Schema", `v${s.schemaVersion}`),
      ];
      if (s.oldestStartedAt !== null) lines.push(row("Oldest", formatDateTime(s.oldestStartedAt)));
      if (s.newestStartedAt !== null) lines.push(row("Newest", formatDateTime(s.newestStartedAt)));
      io.out(lines.join("\n"));
      return 0;
    },
    () => {
      if (flags.json)
        io.out(JSON.stringify({ path: sessionStorePath(home), sessions: 0, messages: 0, exists: false }));
      else io.out(NO_SESSIONS);
      return 0;
    },
  );
}

async function optimize(home: string, io: Io): Promise<number> {
  return withStore(
    home,
    false,
    async (store) => {
      io.err(`Optimizing ${store.path} …`);
      const { bytesBefore, bytesAfter } = await store.optimize();
      const saved = bytesBefore - bytesAfter;
      io.out(
        `Optimized: ${formatBytes(bytesBefore)} → ${formatBytes(bytesAfter)}${saved > 0 ? ` (saved ${formatBytes(saved)})` : ""}.`,
      );
      return 0;
    },
    () => {
      io.out(`${NO_SESSIONS} Nothing to optimize.`);
      return 0;
    },
  );
}

async function repair(home: string, flags: { check?: boolean }, io: Io): Promise<number> {
  return withStore(
    home,
    flags.check === true,
    async (store) => {
      if (!flags.check) io.err(`Repairing ${store.path} …`);
      const report = flags.check ? await store.check() : await store.repair();
      const lines = [`Integrity: ${report.integrity ? "ok" : "FAILED"}`];
      for (const fixed of report.fixed) lines.push(`  fixed: ${fixed}`);
      for (const problem of report.problems) lines.push(`  problem: ${problem}`);
      if (flags.check) {
        lines.push(
          report.problems.length === 0 && report.integrity
            ? "No problems found."
            : "Run `hermes sessions repair` to fix what can be fixed in place.",
        );
      } else if (report.fixed.length === 0) {
        lines.push("Nothing needed fixing.");
      }
      io.out(lines.join("\n"));
      if (flags.check) return report.integrity && report.problems.length === 0 ? 0 : 1;
      return report.integrity ? 0 : 1;
    },
    () => {
      io.out(`${NO_SESSIONS} Nothing to check.`);
      return 0;
    },
  );
}
