/**
 * The hub verbs of `/skills`, for the REPL and every chat: `search QUERY [--source S]`,
 * `browse [--source S] [--page N]`, `inspect ID`, `install ID [--force]`, `audit [NAME]` and
 * `check [NAME]` (updates available). They call the same hub library as `hermes skills`
 * (knowledge/skills/hub/), so every install is fetched into quarantine, scanned and judged by the
 * source's trust level exactly as on the command line.
 *
 * What a chat changes: installing is for the bot's admins only; nobody can answer a terminal
 * question there, so a caution verdict from a community source needs `--force` written in the
 * message; and a chat may name only registry identifiers and public http(s) URLs, never a folder,
 * a git remote or a private address of the machine the gateway runs on. A dangerous verdict is
 * refused on every surface, `--force` or not. Every line is redacted before it is shown.
 */
import { loadEnvFile } from "../config/env-file.js";
import type { HubMeta } from "../knowledge/skills/hub/adapter.js";
import { HubError } from "../knowledge/skills/hub/bundle.js";
import { isPrivateHost } from "../knowledge/skills/hub/http.js";
import { type InstallOutcome, installBundle } from "../knowledge/skills/hub/install.js";
import { listInstalledSkills } from "../knowledge/skills/hub/installed.js";
import { readLock } from "../knowledge/skills/hub/lock.js";
import { auditInstalled, type CheckRow, checkForUpdates } from "../knowledge/skills/hub/maintenance.js";
import { adapterClaiming, HUB_ADAPTERS, searchSources } from "../knowledge/skills/hub/router.js";
import type { ScanFinding, ScanReport } from "../knowledge/skills/hub/scan.js";
import { scanSkillBundle } from "../knowledge/skills/hub/scan.js";
import {
  describeSpec,
  type FetchOptions,
  fetchSkill,
  parseSourceArgument,
  type SourceSpec,
} from "../knowledge/skills/hub/sources.js";
import { installDecision } from "../knowledge/skills/hub/trust.js";
import { redactText } from "../util/redact.js";
import type { CommandContext } from "./types.js";

/** The verbs this module answers under `/skills`. */
export const HUB_VERBS = ["search", "browse", "inspect", "install", "audit", "check"] as const;

/** Whether `/skills <args>` is a hub verb (otherwise a write-approval verb or the list filter). */
export function isHubVerb(args: string): boolean {
  const first = (args.trim().split(/\s+/)[0] ?? "").toLowerCase();
  return (HUB_VERBS as readonly string[]).includes(first);
}

const USAGE: Record<(typeof HUB_VERBS)[number], string> = {
  search: "/skills search QUERY [--source S]",
  browse: "/skills browse [--source S] [--page N]",
  inspect: "/skills inspect ID",
  install: "/skills install ID [--force] [--yes]",
  audit: "/skills audit [NAME]",
  check: "/skills check [NAME]",
};

/** Options each verb takes; `true` means the option takes a value. */
const OPTIONS: Record<(typeof HUB_VERBS)[number], Record<string, boolean>> = {
  search: { "--source": true },
  browse: { "--source": true, "--page": true },
  inspect: {},
  install: { "--force": false, "--yes": false, "-y": false },
  audit: {},
  check: {},
};

const PAGE_SIZE = 15;
const SEARCH_LIMIT = 15;
/** Longest identifier or name accepted from a message. */
const MAX_ARG = 300;

class UsageError extends Error {}

interface Parsed {
  words: string[];
  options: Map<string, string | true>;
}

function parseArgs(verb: (typeof HUB_VERBS)[number], tokens: readonly string[]): Parsed {
  const allowed = OPTIONS[verb];
  const words: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as string;
    if (!token.startsWith("-")) {
      words.push(token);
      continue;
    }
    const [flag = "", inline] = token.split(/=(.*)/s, 2);
    const takesValue = allowed[flag.toLowerCase()];
    if (takesValue === undefined) throw new UsageError(`"${token}" is not an option of /skills ${verb}.`);
    if (!takesValue) {
      options.set(flag.toLowerCase(), true);
      continue;
    }
    const value = inline ?? tokens[++i];
    if (value === undefined || value === "" || value.startsWith("-"))
      throw new UsageError(`${flag} needs a value.`);
    options.set(flag.toLowerCase(), value);
  }
  return { words, options };
}

/** A one-line reason from any error (a hub error's message, a network failure's first line). */
function reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return (text.split("\n").find((l) => l.trim() !== "") ?? "unknown error").trim().slice(0, 300);
}

function hubEnv(home: string): Record<string, string | undefined> {
  return loadEnvFile(home, process.env).env;
}

function sourcesFor(value: string | true | undefined): string[] {
  const ids = HUB_ADAPTERS.map((a) => a.id);
  if (value === undefined || value === true || value === "all") return ids;
  const wanted = value.toLowerCase() === "skills.sh" ? "skills-sh" : value.toLowerCase();
  if (!ids.includes(wanted))
    throw new UsageError(`Unknown source "${value}". Use one of: ${ids.join(", ")}, all.`);
  return [wanted];
}

/** A GitHub `owner/repo/path` identifier without a prefix. */
const GITHUB_PATH = /^[A-Za-z0-9][\w.-]*\/[\w.-]+\/[\w./-]+$/;

/**
 * Checks an identifier typed in a message. A chat may only name registries and public URLs: it is
 * read without touching the host's files, so a chat cannot probe or read the gateway's folders.
 */
function specFor(id: string | undefined, verb: keyof typeof USAGE, ctx: CommandContext): SourceSpec {
  if (id === undefined) throw new UsageError(`Usage: ${USAGE[verb]}`);
  if (id.length > MAX_ARG || /\p{Cc}/u.test(id))
    throw new UsageError("That identifier is too long or holds control characters.");
  if (ctx.surface.kind !== "chat") return parseSourceArgument(id, { cwd: ctx.session.agent.cwd });
  const claimed = adapterClaiming(id);
  if (claimed) return { kind: "hub", source: claimed.id, identifier: id };
  if (!/^(https?:\/\/|well-known:)/i.test(id)) {
    if (GITHUB_PATH.test(id) && !id.split("/").includes(".."))
      return { kind: "hub", source: "github", identifier: id };
    throw new UsageError(
      `In a chat /skills ${verb} takes a registry identifier (official/…, clawhub/…, owner/repo/path) or a public https URL, not a folder or a git remote. Use \`hermes skills ${verb}\` on the host for those.`,
    );
  }
  const spec = parseSourceArgument(id);
  if (spec.kind === "local" || spec.kind === "git")
    throw new UsageError(
      `In a chat /skills ${verb} does not fetch git remotes; use \`hermes skills ${verb}\` on the host.`,
    );
  const url = spec.kind === "url" ? spec.url : spec.kind === "well-known" ? spec.indexUrl : undefined;
  if (url !== undefined && isPrivateHost(new URL(url).hostname))
    throw new UsageError(`In a chat /skills ${verb} does not fetch from private or loopback addresses.`);
  return spec;
}

function findingLines(findings: readonly ScanFinding[], max = 8): string[] {
  const shown = findings.slice(0, max).map((f) => `  ${f.severity} ${f.file}:${f.line} ${f.description}`);
  if (findings.length > max) shown.push(`  … and ${findings.length - max} more`);
  return shown;
}

function metaLine(m: HubMeta, installed: ReadonlySet<string>): string {
  const description = m.description.replace(/\s+/g, " ").slice(0, 80);
  const mark = installed.has(m.name) ? " (installed)" : "";
  return `• ${m.name}${mark} — ${description} [${m.source}, ${m.trust}]\n    ${m.identifier}`;
}

/** Runs `/skills <hub verb> …`; every line it shows goes through the redactor. */
export async function runSkillsHub(args: string, ctx: CommandContext): Promise<void> {
  const reply = (...lines: string[]) => ctx.reply(...lines.map((l) => redactText(l)));
  const tokens = args.trim().split(/\s+/).filter(Boolean);
  const verb = (tokens[0] ?? "").toLowerCase() as (typeof HUB_VERBS)[number];
  const p = ctx.paint;
  try {
    const parsed = parseArgs(verb, tokens.slice(1));
    await VERB_RUNNERS[verb](parsed, ctx, reply);
  } catch (error) {
    if (error instanceof UsageError) return reply(p.yellow(error.message));
    if (error instanceof HubError && error.exitCode === 2) return reply(p.yellow(reason(error)));
    reply(`${p.red("✗")} /skills ${verb}: ${reason(error)}`);
  }
}

type Reply = (...lines: string[]) => void;
type Runner = (parsed: Parsed, ctx: CommandContext, reply: Reply) => Promise<void>;

async function installedNames(home: string): Promise<Set<string>> {
  try {
    return new Set((await listInstalledSkills(home, await readLock(home))).map((s) => s.name));
  } catch {
    return new Set();
  }
}

async function listing(
  query: string,
  parsed: Parsed,
  ctx: CommandContext,
  limit: number,
): Promise<{ results: HubMeta[]; failed: string[] }> {
  const { home } = ctx.session.agent;
  const found = await searchSources(query, sourcesFor(parsed.options.get("--source")), limit, {
    env: hubEnv(home),
    home,
  });
  const failed = found.perSource.filter((s) => s.error).map((s) => `${s.source}: ${reason(s.error)}`);
  return { results: found.results, failed };
}

const search: Runner = async (parsed, ctx, reply) => {
  const query = parsed.words.join(" ");
  if (!query) throw new UsageError(`Usage: ${USAGE.search}`);
  const p = ctx.paint;
  const { results, failed } = await listing(query, parsed, ctx, SEARCH_LIMIT);
  const installed = await installedNames(ctx.session.agent.home);
  const shown = results.slice(0, SEARCH_LIMIT);
  const lines = shown.length
    ? [p.bold(`${results.length} skills match "${query}"`), ...shown.map((m) => metaLine(m, installed))]
    : [p.dim(`No skill in the registries matches "${query}".`)];
  if (failed.length) lines.push(p.yellow(`Unreachable: ${failed.join("; ")}`));
  if (shown.length) lines.push(p.dim("Look before installing: /skills inspect ID"));
  reply(...lines);
};

const browse: Runner = async (parsed, ctx, reply) => {
  const p = ctx.paint;
  const rawPage = parsed.options.get("--page");
  const page = rawPage === undefined ? 1 : Number(rawPage);
  if (!Number.isInteger(page) || page < 1 || page > 100)
    throw new UsageError(`--page takes a whole number from 1 to 100, not "${String(rawPage)}".`);
  const { results, failed } = await listing("", parsed, ctx, page * PAGE_SIZE);
  const installed = await installedNames(ctx.session.agent.home);
  const shown = results.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);
  const lines = shown.length
    ? [p.bold(`Skills, page ${page} (trusted sources first)`), ...shown.map((m) => metaLine(m, installed))]
    : [p.dim(page > 1 ? `No skills on page ${page}.` : "No skills found in the selected sources.")];
  if (failed.length) lines.push(p.yellow(`Unreachable: ${failed.join("; ")}`));
  if (results.length > page * PAGE_SIZE) lines.push(p.dim(`More: /skills browse --page ${page + 1}`));
  reply(...lines);
};

function fetchOptions(ctx: CommandContext): FetchOptions {
  const { home } = ctx.session.agent;
  // A chat's identifier never gets the local user's allowance for private addresses.
  return { env: hubEnv(home), home, ...(ctx.surface.kind === "chat" ? { remoteRequest: true } : {}) };
}

const inspect: Runner = async (parsed, ctx, reply) => {
  const p = ctx.paint;
  const spec = specFor(parsed.words[0], "inspect", ctx);
  if (parsed.words.length > 1) throw new UsageError(`Usage: ${USAGE.inspect}`);
  const bundle = await fetchSkill(spec, fetchOptions(ctx));
  const report = scanSkillBundle(bundle.files);
  const trust = bundle.trust ?? "community";
  const allows = {
    install: "installs",
    confirm: "installs only with --force",
    refuse: "refused, even with --force",
  }[installDecision(trust, report.verdict)];
  const skillMd = (bundle.files.get("SKILL.md") ?? Buffer.alloc(0)).toString("utf8").split("\n");
  const body = [
    ...skillMd.slice(0, 30),
    ...(skillMd.length > 30 ? [`… (${skillMd.length - 30} more lines)`] : []),
  ];
  reply(
    `${p.bold(bundle.name)}  ${bundle.source}, trust ${trust} — nothing was installed`,
    `Identifier: ${bundle.identifier}`,
    `Files: ${[...bundle.files.keys()].sort().join(", ")}`,
    `Scan: ${report.verdict} (${allows})`,
    ...findingLines(report.findings),
    ...(ctx.surface.kind === "chat" ? ["```", ...body, "```"] : body),
  );
};

function outcomeLines(outcome: InstallOutcome, ctx: CommandContext): string[] {
  const p = ctx.paint;
  if (outcome.status === "refused") {
    const head =
      outcome.reason === "dangerous" ? `${p.red("⛔")} ${outcome.message}` : p.yellow(outcome.message);
    const hint =
      outcome.reason === "needs_confirmation"
        ? [p.dim("Read the findings; resend with --force to accept them.")]
        : [];
    return [head, ...(outcome.report ? findingLines(outcome.report.findings) : []), ...hint];
  }
  const verb = outcome.status === "updated" ? "Updated" : "Installed";
  const warn =
    outcome.report.verdict === "safe"
      ? []
      : [
          p.yellow(`Scan verdict ${outcome.report.verdict}, accepted:`),
          ...findingLines(outcome.report.findings),
        ];
  return [
    `${p.green("✓")} ${verb} ${outcome.name} in skills/${outcome.relPath} (scan: ${outcome.report.verdict}).`,
    ...warn,
    p.dim(
      "This session's system prompt stays as it was; the skill is in the index from the next session (/new).",
    ),
  ];
}

const install: Runner = async (parsed, ctx, reply) => {
  const p = ctx.paint;
  if (ctx.surface.kind === "chat" && !ctx.surface.isAdmin) {
    reply("⛔ Only this bot's admins may install skills. /skills inspect ID shows one without installing.");
    return;
  }
  const spec = specFor(parsed.words[0], "install", ctx);
  if (parsed.words.length > 1) throw new UsageError(`Usage: ${USAGE.install}`);
  const force = parsed.options.has("--force");
  const yes = parsed.options.has("--yes") || parsed.options.has("-y");
  const bundle = await fetchSkill(spec, fetchOptions(ctx));
  // A terminal that is not busy with a turn can be asked; a chat cannot, so --force is the answer.
  const canAsk = ctx.surface.kind === "repl" && !ctx.running;
  const askYes = async (lines: string[], question: string) =>
    /^(y|yes)$/i.test(
      (
        (await ctx.ask(
          lines.map((l) => redactText(l)),
          question,
        )) ?? ""
      ).trim(),
    );
  const outcome = await installBundle({
    home: ctx.session.agent.home,
    bundle,
    ...(force ? { force: true } : {}),
    ...(yes ? { yes: true } : {}),
    now: () => ctx.now(),
    ...(canAsk
      ? {
          confirmCaution: (report: ScanReport) =>
            askYes(
              [
                p.yellow(`Scan verdict for ${bundle.name}: ${report.verdict}`),
                ...findingLines(report.findings),
              ],
              `Install ${bundle.name} anyway? [y/N] `,
            ),
          confirmReplace: (entry: { source: string; identifier: string }) =>
            askYes(
              [`${bundle.name} is installed from ${entry.source} ${entry.identifier}.`],
              `Replace it with ${describeSpec(spec)}? [y/N] `,
            ),
        }
      : {}),
  });
  const lines = outcomeLines(outcome, ctx);
  if (outcome.status === "refused" && outcome.reason === "source_changed")
    lines.push(p.dim("Resend with --yes to replace it."));
  reply(...bundle.warnings.map((w) => p.dim(`note: ${w}`)), ...lines);
};

function nameArg(parsed: Parsed, verb: "audit" | "check"): string | undefined {
  if (parsed.words.length > 1) throw new UsageError(`Usage: ${USAGE[verb]}`);
  const name = parsed.words[0];
  if (name !== undefined && (name.length > MAX_ARG || !/^[\w.-]+$/.test(name)))
    throw new UsageError(`"${name.slice(0, 60)}" is not a skill name.`);
  return name;
}

const audit: Runner = async (parsed, ctx, reply) => {
  const p = ctx.paint;
  const name = nameArg(parsed, "audit");
  const rows = await auditInstalled(ctx.session.agent.home, name ? { name } : {});
  if (rows.length === 0) return reply(p.dim("No hub-installed skills to audit."));
  const lines: string[] = [];
  for (const r of rows) {
    const mark = r.verdict === "safe" ? p.green("✓") : r.verdict === "caution" ? p.yellow("!") : p.red("✗");
    const modified = r.modified ? p.yellow(" modified since install") : "";
    lines.push(`${mark} ${r.name} ${r.verdict} skills/${r.relPath}${modified}`);
    lines.push(...(r.error ? [`  could not read: ${r.error}`] : findingLines(r.findings, 4)));
  }
  const dangerous = rows.filter((r) => r.verdict === "dangerous").length;
  lines.push(p.dim(`Audited ${rows.length} skill(s)${dangerous ? `, ${dangerous} dangerous` : ""}.`));
  reply(...lines);
};

const STATUS: Record<CheckRow["status"], string> = {
  up_to_date: "up to date",
  update_available: "update available",
  unreachable: "source unreachable",
  missing: "folder missing",
};

const check: Runner = async (parsed, ctx, reply) => {
  const p = ctx.paint;
  const name = nameArg(parsed, "check");
  const rows = await checkForUpdates(ctx.session.agent.home, name, fetchOptions(ctx));
  if (rows.length === 0) return reply(p.dim("No hub-installed skills to check."));
  const lines = rows.map((r) => {
    const detail = r.error ? `: ${reason(r.error)}` : "";
    return `${r.status === "update_available" ? p.yellow("↑") : "•"} ${r.name} — ${STATUS[r.status]} (${r.source} ${r.identifier})${detail}`;
  });
  if (rows.some((r) => r.status === "update_available"))
    lines.push(p.dim("Update one with /skills install ID (scanned again like a first install)."));
  reply(...lines);
};

const VERB_RUNNERS: Record<(typeof HUB_VERBS)[number], Runner> = {
  search,
  browse,
  inspect,
  install,
  audit,
  check,
};

/** Completion candidates after `/skills `. */
export const HUB_COMPLETIONS: readonly string[] = HUB_VERBS.map((v) => `${v} `);
