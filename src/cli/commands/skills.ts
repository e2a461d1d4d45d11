/**
 * `hermes skills list|view|search|install|uninstall|check|audit`: the skills hub from the command
 * line; `pending|approve|reject|diff`: the agent's skill writes waiting for approval;
 * `reset|list-modified|diff|opt-out|opt-in|repair-official|lint|publish|snapshot`: bundled-skill
 * management and sharing (skills/bundled-commands.ts; `diff` takes a pending id or a bundled name). Results go to stdout, progress, scan reports and warnings to stderr. Exit codes: 0 success
 * (or a question answered no), 1 the task failed (unreachable source, dangerous skill refused,
 * conflict with an existing skill, `audit` found something dangerous, `check` could not reach a
 * source), 2 usage or configuration error (including a caution verdict or an uninstall that needs
 * --force / -y when nobody can be asked).
 */

import { InvalidArgumentError, Option } from "commander";
import type { HermesConfig } from "../../config/defaults.js";
import { loadEnvFile } from "../../config/env-file.js";
import { loadConfig } from "../../config/load.js";
import { bundledSkillsDir, seedBundledSkills } from "../../knowledge/skills/bundled.js";
import { FileLockTimeoutError } from "../../util/file-lock.js";
import { type CliCommand, defineCommand, type RunOptions } from "../command.js";
import { withHomeKnowledge } from "./home-knowledge.js";
import { type ListSource, listCommand, searchCommand, viewCommand } from "./skills/browse.js";
import { registerManagementCommands } from "./skills/bundled-commands.js";
import { registerHubCommands } from "./skills/hub-commands.js";
import type { SkillsIo } from "./skills/io.js";
import {
  auditCommand,
  checkCommand,
  type InstallFlags,
  installCommand,
  toCliFailure,
  uninstallCommand,
} from "./skills/manage.js";
import { approveCli, diffCli, type PendingCliContext, pendingListCli, rejectCli } from "./write-approval.js";

export interface SkillsCommandOptions extends RunOptions, SkillsSetup {}

/** What tests change: where relative install paths start, and how long an HTTP request may take. */
export interface SkillsSetup {
  /** Working directory for relative install paths; default `process.cwd()`. */
  cwd?: string;
  /** HTTP timeout per request in milliseconds (tests shorten it). */
  httpTimeoutMs?: number;
}

/** Runs `hermes skills <argv…>` and returns the exit code. Never throws for expected failures. */
export function runSkillsCommand(
  argv: readonly string[],
  options: SkillsCommandOptions = {},
): Promise<number> {
  return skillsCommand(options).run(argv, options);
}

function count(value: string, what: string, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) {
    throw new InvalidArgumentError(`${what} expects a whole number of at least ${min}, got "${value}".`);
  }
  return n;
}

/** `skills.hub_indexes` from config.yaml: a list of index URLs or site roots (a single string works too). */
function configuredIndexes(config: HermesConfig): string[] {
  const value = config.skills["hub_indexes"];
  if (typeof value === "string") return value.trim() ? [value.trim()] : [];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string" && v.trim() !== "");
  return [];
}

function loadHomeConfig(home: string, io: SkillsIo): HermesConfig {
  const { env } = loadEnvFile(home, io.env);
  const loaded = loadConfig({ home, env });
  for (const warning of loaded.warnings) io.err(`hermes skills: warning: ${warning}`);
  return loaded.config;
}

interface Ctx {
  home: string;
  io: SkillsIo;
  fetchOptions: {
    timeoutMs?: number;
    log: (message: string) => void;
    env: Record<string, string | undefined>;
    home: string;
  };
}

/** `hermes skills …`. */
export function skillsCommand(setup: SkillsSetup = {}): CliCommand {
  // opt-out / opt-in decide about seeding themselves: seeding first would defeat an opt-out.
  let seed = true;
  return defineCommand({
    name: "skills",
    description:
      "Manage skills: list what is installed, install from registries, folders, git or the web, scan and update",
    needs: "home",
    defaultSubcommand: "list",
    open: ({ home, io }): Ctx => {
      return {
        home,
        io: { ...io, cwd: setup.cwd ?? process.cwd() },
        fetchOptions: {
          ...(setup.httpTimeoutMs ? { timeoutMs: setup.httpTimeoutMs } : {}),
          log: (message: string) => io.err(message),
          env: io.env,
          home,
        },
      };
    },
    // Hub failures carry their exit code; a lock held too long is a failed task.
    expected: (error) =>
      toCliFailure(error)?.exitCode ?? (error instanceof FileLockTimeoutError ? 1 : undefined),
    parse: (root, own) => {
      // Every subcommand runs with a PostgreSQL home's shared skills open (home-knowledge.ts).
      // Bundled skills are installed on first use of the home, as a chat would: once the shared
      // skills and opt-out lists are current, so an opt-out made on another instance is honoured.
      const run: typeof own = (body) =>
        own((ctx, ...args) =>
          withHomeKnowledge(ctx.home, ctx.io.env, () => {
            const bundled = bundledSkillsDir(ctx.io.env);
            if (bundled && seed) seedBundledSkills(ctx.home, bundled);
            return body(ctx, ...args);
          }),
        );
      root
        .command("list")
        .description(
          "list installed skills: name, category, origin (hub, bundled, agent, local), description",
        )
        .addOption(
          new Option("--source <source>", "only skills of this origin")
            .choices(["hub", "bundled", "local", "all"])
            .default("all"),
        )
        .option("--json", "print JSON")
        .action(
          // Usage counts and pins from the home's store (the shared database on a postgres home).
          run(({ home, io }, flags: { source: ListSource; json?: boolean }) => listCommand(home, flags, io)),
        );

      root
        .command("view")
        .description("print an installed skill's SKILL.md and list its linked files, or print one of them")
        .argument("<name>", "skill name")
        .argument("[file]", "a file inside the skill, e.g. references/api.md")
        .option("--json", "print JSON: {name, path, content, linkedFiles}")
        .action(
          run(({ home, io }, name: string, file: string | undefined, flags: { json?: boolean }) =>
            viewCommand(home, name, file, flags, io),
          ),
        );

      root
        .command("search")
        .description(
          "search installed skills, official skills and well-known indexes; --source a registry (or all) to search it",
        )
        .argument(
          "[query...]",
          "words to find in names and descriptions (all required); empty lists everything",
        )
        .option(
          "--index <url>",
          "also search this index (a site, or its /.well-known/skills/index.json); repeatable",
          (value: string, previous: string[]) => [...previous, value],
          [] as string[],
        )
        .option("--limit <n>", "most results to show", (v) => count(v, "--limit", 1), 50)
        .option("--source <name>", "search one source (a registry, well-known, installed) or all")
        .option("--json", "print JSON")
        .action(
          run(
            async (
              { home, io, fetchOptions },
              words: string[],
              flags: { index: string[]; limit: number; json?: boolean; source?: string },
            ) => {
              const indexes = [...configuredIndexes(loadHomeConfig(home, io)), ...flags.index];
              return searchCommand(home, words.join(" "), indexes, flags, io, fetchOptions);
            },
          ),
        );

      root
        .command("install")
        .description("fetch a skill, scan it, and install it into the home's skills folder")
        .argument(
          "[source]",
          "a registry identifier (official/…, skills-sh/…, owner/repo/path, clawhub/…, claude-marketplace/…, lobehub/…, browse-sh/…), " +
            "a folder (or a folder of skills), a git URL (….git, git@host:path, file://; #ref and :subdir), " +
            "an https URL to a SKILL.md, a site or /.well-known/skills/index.json, or a well-known: identifier",
        )
        .option(
          "--git <url>",
          "treat the source as a git repository: URL, URL#ref, URL#ref:subdir or URL#:subdir",
        )
        .option("--name <name>", "which skill to take from a source holding several; renames a single skill")
        .option(
          "--category <category>",
          "install under skills/<category>/ (default: the skill's own category)",
        )
        .option("--force", "install despite a caution verdict (a dangerous verdict is always refused)")
        .option("-y, --yes", "replace a hub skill installed from a different source without asking")
        .action(
          run(({ home, io, fetchOptions }, source: string | undefined, flags: InstallFlags) =>
            installCommand(home, source, flags, io, fetchOptions),
          ),
        );

      root
        .command("uninstall")
        .description("remove a skill installed by the hub (other skills are never removed)")
        .argument("<name>", "skill name")
        .option("-y, --yes", "do not ask for confirmation")
        .action(
          run(({ home, io }, name: string, flags: { yes?: boolean }) =>
            uninstallCommand(home, name, flags, io),
          ),
        );

      root
        .command("check")
        .description("compare hub skills with their sources: up to date, update available, or unreachable")
        .argument("[name]", "only this skill")
        .option("--update", "install available updates (scanned again, like an install)")
        .option("--force", "with --update: accept a caution verdict")
        .option("-y, --yes", "with --update: do not ask")
        .option("--json", "print JSON")
        .action(
          run(
            (
              { home, io, fetchOptions },
              name: string | undefined,
              flags: { update?: boolean; force?: boolean; yes?: boolean; json?: boolean },
            ) => checkCommand(home, name, flags, io, fetchOptions),
          ),
        );

      root
        .command("audit")
        .description(
          "re-scan installed skills (hub skills; --all for every skill) and print verdicts and findings",
        )
        .argument("[name]", "only this skill")
        .option("--all", "scan every installed skill, not only hub ones")
        .option("--json", "print JSON")
        .action(
          run(({ home, io }, name: string | undefined, flags: { all?: boolean; json?: boolean }) =>
            auditCommand(home, name, flags, io),
          ),
        );

      registerHubCommands(root, run);

      // The agent's skill writes staged while skills.write_approval is on (logic in write-approval.ts).
      const pending =
        <A extends unknown[]>(body: (ctx: PendingCliContext, ...args: A) => Promise<number> | number) =>
        ({ home, io }: Ctx, ...args: A) =>
          body({ home, config: loadHomeConfig(home, io), io }, ...args);

      root
        .command("pending")
        .description("list skill writes the agent staged for approval (skills.write_approval)")
        .option("--json", "print JSON")
        .action(run(pending((ctx, flags: { json?: boolean }) => pendingListCli(ctx, "skills", flags))));

      // Bundled skills (reset, list-modified, diff, opt-out, opt-in), lint, publish, snapshot.
      registerManagementCommands(root, run, {
        config: ({ home, io }) => loadHomeConfig(home, io),
        pendingDiff: ({ home, io }, id) =>
          diffCli({ home, config: loadHomeConfig(home, io), io }, "skills", id),
        skipSeeding: () => {
          seed = false;
        },
      });

      root
        .command("approve")
        .description(
          "apply a staged skill write (or all), with the same validation and scan as a direct write",
        )
        .argument("<id>", "the pending id, or all")
        .option(
          "--force",
          "apply even though the skill changed since the write was staged (review the diff first)",
        )
        .option("--json", "print JSON")
        .action(
          run(
            pending((ctx, id: string, flags: { force?: boolean; json?: boolean }) =>
              approveCli(ctx, "skills", id, flags),
            ),
          ),
        );

      root
        .command("reject")
        .description("drop a staged skill write (or all) without applying it")
        .argument("<id>", "the pending id, or all")
        .option("--json", "print JSON")
        .action(
          run(pending((ctx, id: string, flags: { json?: boolean }) => rejectCli(ctx, "skills", id, flags))),
        );
    },
  });
}
