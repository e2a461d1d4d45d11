/**
 * The hub subcommands this file registers on `hermes skills`: `browse` (what the registries offer),
 * `inspect` (fetch and scan a skill without installing it), `update` (apply available updates,
 * scanned again) and `tap list|add|remove` (GitHub repositories the `github` source searches).
 * `search`, `install`, `check`, `audit` and `uninstall` are registered in skills.ts.
 */
import type { Command } from "commander";
import pc from "picocolors";
import type { HubMeta } from "../../../knowledge/skills/hub/adapter.js";
import { HUB_ADAPTERS, searchSources } from "../../../knowledge/skills/hub/router.js";
import { scanSkillBundle } from "../../../knowledge/skills/hub/scan.js";
import {
  describeSpec,
  type FetchOptions,
  fetchSkill,
  parseSourceArgument,
} from "../../../knowledge/skills/hub/sources.js";
import { addTap, DEFAULT_TAPS, parseTap, readTaps, removeTap } from "../../../knowledge/skills/hub/taps.js";
import { installDecision } from "../../../knowledge/skills/hub/trust.js";
import type { Action } from "../../command.js";
import { renderTable } from "../../format/table.js";
import { CliFailure, findingLines, paintVerdict, plural, type SkillsIo, style } from "./io.js";
import { checkCommand } from "./manage.js";

/** What these commands need from the `hermes skills` context. */
export interface HubCommandContext {
  home: string;
  io: SkillsIo;
  fetchOptions: FetchOptions;
}

function count(value: string, what: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new CliFailure(`${what} expects a whole number of at least 1, got "${value}".`, 2);
  return n;
}

function sourceList(source: string): string[] {
  const ids = HUB_ADAPTERS.map((a) => a.id);
  if (source === "all") return ids;
  if (!ids.includes(source))
    throw new CliFailure(`unknown source "${source}"; use one of: ${[...ids, "all"].join(", ")}.`, 2);
  return [source];
}

function metaTable(io: SkillsIo, rows: readonly HubMeta[]): string[] {
  const paint = (fn: (s: string) => string) => (io.color ? fn : undefined);
  return renderTable(
    [
      { header: "NAME", paint: paint(pc.cyan) },
      { header: "SOURCE" },
      { header: "TRUST" },
      { header: "DESCRIPTION", flex: true, paint: paint(pc.dim) },
      { header: "IDENTIFIER" },
    ],
    rows.map((r) => [r.name, r.source, r.trust, r.description, r.identifier]),
    { ...(io.width ? { width: io.width } : {}), ...(io.color ? { paintHeader: pc.bold } : {}) },
  );
}

export async function browseCommand(
  ctx: HubCommandContext,
  flags: { source: string; page: number; size: number; json?: boolean },
): Promise<number> {
  const { io, home, fetchOptions } = ctx;
  const sources = sourceList(flags.source);
  const found = await searchSources("", sources, flags.page * flags.size, {
    env: fetchOptions.env ?? io.env,
    home,
    ...(fetchOptions.timeoutMs ? { timeoutMs: fetchOptions.timeoutMs } : {}),
  });
  for (const s of found.perSource.filter((p) => p.error)) io.err(`hermes skills: ${s.source}: ${s.error}`);
  const start = (flags.page - 1) * flags.size;
  const page = found.results.slice(start, start + flags.size);
  if (flags.json) {
    io.out(
      JSON.stringify(
        { page: flags.page, total: found.results.length, skills: page, sources: found.perSource },
        null,
        2,
      ),
    );
    return 0;
  }
  if (page.length === 0) {
    io.out(flags.page > 1 ? `No skills on page ${flags.page}.` : "No skills found in the selected sources.");
    return found.perSource.every((p) => p.error) ? 1 : 0;
  }
  io.out(metaTable(io, page).join("\n"));
  io.err(
    `Page ${flags.page} (${plural(found.results.length, "skill")}: ${found.perSource.map((p) => `${p.source} ${p.error ? "failed" : p.count}`).join(", ")}). ` +
      "Inspect one with: hermes skills inspect IDENTIFIER",
  );
  return 0;
}

export async function inspectCommand(
  ctx: HubCommandContext,
  identifier: string,
  flags: { json?: boolean; name?: string },
): Promise<number> {
  const { io } = ctx;
  const spec = parseSourceArgument(identifier, { cwd: io.cwd });
  io.err(`Fetching ${describeSpec(spec)} (nothing is installed) …`);
  const bundle = await fetchSkill(spec, {
    ...ctx.fetchOptions,
    home: ctx.home,
    ...(flags.name ? { select: flags.name } : {}),
  });
  const report = scanSkillBundle(bundle.files);
  const trust = bundle.trust ?? "community";
  const decision = installDecision(trust, report.verdict);
  const skillMd = (bundle.files.get("SKILL.md") ?? Buffer.alloc(0)).toString("utf8");
  const allows = {
    install: "installs",
    confirm: "installs only with --force or a yes",
    refuse: "refused (even with --force)",
  }[decision];
  if (flags.json) {
    io.out(
      JSON.stringify(
        {
          name: bundle.name,
          source: bundle.source,
          identifier: bundle.identifier,
          trust_level: trust,
          scan_verdict: report.verdict,
          install: decision,
          files: [...bundle.files.keys()].sort(),
          findings: report.findings,
          metadata: bundle.metadata,
          skill_md: skillMd,
        },
        null,
        2,
      ),
    );
    return 0;
  }
  io.out(`${style(io, pc.bold, bundle.name)}  ${bundle.source}  trust ${trust}`);
  io.out(`Identifier: ${bundle.identifier}`);
  io.out(`Files: ${[...bundle.files.keys()].sort().join(", ")}`);
  io.out(`Scan: ${paintVerdict(io, report.verdict)} — ${allows}`);
  if (report.findings.length > 0) io.out(findingLines(io, report.findings).join("\n"));
  const lines = skillMd.split("\n");
  io.out(
    `\n${lines.slice(0, 40).join("\n")}${lines.length > 40 ? `\n… (${lines.length - 40} more lines)` : ""}`,
  );
  return 0;
}

export async function tapCommand(
  ctx: HubCommandContext,
  action: string,
  repo: string | undefined,
  flags: { path?: string; json?: boolean },
): Promise<number> {
  const { io, home } = ctx;
  if (action === "list") {
    const own = await readTaps(home);
    if (flags.json) {
      io.out(JSON.stringify({ default: DEFAULT_TAPS, taps: own }, null, 2));
      return 0;
    }
    const rows = [
      ...DEFAULT_TAPS.map((t) => [t.repo, t.path || "/", "default"]),
      ...own.map((t) => [t.repo, t.path || "/", "added"]),
    ];
    io.out(
      renderTable(
        [{ header: "REPOSITORY" }, { header: "PATH" }, { header: "KIND" }],
        rows,
        io.width ? { width: io.width } : {},
      ).join("\n"),
    );
    return 0;
  }
  if (repo === undefined) throw new CliFailure(`tap ${action} needs a repository (owner/name).`, 2);
  if (action === "add") {
    const tap = parseTap(repo, flags.path ?? "skills/");
    const added = await addTap(home, tap);
    io.out(
      added
        ? `Added tap ${tap.repo} (${tap.path || "/"}); search it with: hermes skills search --source github`
        : `${tap.repo} is already a tap.`,
    );
    return 0;
  }
  if (action === "remove") {
    const tap = parseTap(repo, "");
    if (!(await removeTap(home, tap.repo))) {
      throw new CliFailure(
        DEFAULT_TAPS.some((t) => t.repo.toLowerCase() === tap.repo.toLowerCase())
          ? `${tap.repo} is a default tap and cannot be removed.`
          : `${tap.repo} is not a tap. See: hermes skills tap list`,
      );
    }
    io.out(`Removed tap ${tap.repo}.`);
    return 0;
  }
  throw new CliFailure(`unknown tap action "${action}"; use list, add or remove.`, 2);
}

/** Registers browse, inspect, update and tap on `hermes skills`. */
export function registerHubCommands<C extends HubCommandContext>(root: Command, run: Action<C>): void {
  const sources = [...HUB_ADAPTERS.map((a) => a.id), "all"].join(", ");
  root
    .command("browse")
    .description("list what the skill registries offer, trusted sources first")
    .option("--source <name>", `one source (${sources})`, "all")
    .option("--page <n>", "page number", (v) => count(v, "--page"), 1)
    .option("--size <n>", "skills per page", (v) => count(v, "--size"), 20)
    .option("--json", "print JSON")
    .action(
      run((ctx: C, flags: { source: string; page: number; size: number; json?: boolean }) =>
        browseCommand(ctx, { ...flags, size: Math.min(flags.size, 100) }),
      ),
    );

  root
    .command("inspect")
    .description(
      "fetch a skill from any source and show its files, trust and scan verdict without installing it",
    )
    .argument(
      "<identifier>",
      "what install takes: official/…, skills-sh/…, clawhub/…, owner/repo/path, a URL, a folder …",
    )
    .option("--name <name>", "which skill to take from a source holding several")
    .option("--json", "print JSON")
    .action(
      run((ctx: C, identifier: string, flags: { json?: boolean; name?: string }) =>
        inspectCommand(ctx, identifier, flags),
      ),
    );

  root
    .command("update")
    .description("install available updates of hub skills, scanned again like an install (check only looks)")
    .argument("[name]", "only this skill")
    .option("--force", "accept a caution verdict from a community source (never a dangerous one)")
    .option("-y, --yes", "do not ask")
    .option("--json", "print JSON")
    .action(
      run((ctx: C, name: string | undefined, flags: { force?: boolean; yes?: boolean; json?: boolean }) =>
        checkCommand(ctx.home, name, { ...flags, update: true }, ctx.io, {
          ...ctx.fetchOptions,
          home: ctx.home,
        }),
      ),
    );

  root
    .command("tap")
    .description(
      "GitHub repositories the github source searches: tap list | tap add OWNER/REPO [--path DIR] | tap remove OWNER/REPO",
    )
    .argument("<action>", "list, add or remove")
    .argument("[repo]", "owner/name (or https://github.com/owner/name)")
    .option("--path <dir>", "folder holding the skills in the repository (add; default skills/)")
    .option("--json", "print JSON (list)")
    .action(
      run((ctx: C, action: string, repo: string | undefined, flags: { path?: string; json?: boolean }) =>
        tapCommand(ctx, action, repo, flags),
      ),
    );
}
