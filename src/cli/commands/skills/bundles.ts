/**
 * `hermes bundles list | show | create | delete | reload`: skill bundles (skill-bundles.ts), each
 * loaded in a chat with `/<name> [request]`.
 */
import { loadConfig } from "../../../config/load.js";
import { bundledSkillsDir, seedBundledSkills } from "../../../knowledge/skills/bundled.js";
import { discoverSkills } from "../../../knowledge/skills/discovery.js";
import {
  bundleSlugProblem,
  deleteBundle,
  listBundles,
  readBundle,
  writeBundle,
} from "../../../knowledge/skills/skill-bundles.js";
import type { SkillsConfig } from "../../../knowledge/skills/types.js";
import { type CliCommand, CliFailure, defineCommand } from "../../command.js";
import type { CliIo } from "../../io.js";

function installedNames(home: string, io: CliIo): Set<string> {
  // The bundled skills are in the home from its first use, as `hermes skills` and a chat seed them
  // (opt-outs respected): a bundle of bundled skills is never reported as missing on a fresh home.
  const bundled = bundledSkillsDir(io.env);
  if (bundled) seedBundledSkills(home, bundled);
  let config: SkillsConfig | undefined;
  try {
    config = loadConfig({ home, env: io.env }).config.skills as SkillsConfig;
  } catch {
    config = undefined;
  }
  return new Set(
    discoverSkills({
      home,
      config,
      env: io.env,
      includeDisabled: true,
      includeOtherPlatforms: true,
    }).skills.map((s) => s.name),
  );
}

function listCli(home: string, io: CliIo, flags: { json?: boolean }): number {
  const bundles = listBundles(home);
  const installed = installedNames(home, io);
  if (flags.json) {
    io.out(
      JSON.stringify(
        bundles.map((b) =>
          b.ok
            ? { ...b.bundle, missing: b.bundle.skills.filter((s) => !installed.has(s)) }
            : { slug: b.slug, error: b.error },
        ),
        null,
        2,
      ),
    );
    return 0;
  }
  if (bundles.length === 0) {
    io.out("No skill bundles. Create one: hermes bundles create NAME --skill A --skill B");
    return 0;
  }
  for (const b of bundles) {
    if (!b.ok) {
      io.out(`✗ /${b.slug}  broken: ${b.error}`);
      continue;
    }
    const missing = b.bundle.skills.filter((s) => !installed.has(s));
    const note = missing.length ? `  (not installed: ${missing.join(", ")})` : "";
    io.out(
      `/${b.bundle.slug}  ${b.bundle.skills.join(", ")}${b.bundle.description ? ` — ${b.bundle.description}` : ""}${note}`,
    );
  }
  return 0;
}

function showCli(home: string, io: CliIo, slug: string, flags: { json?: boolean }): number {
  const read = readBundle(home, slug);
  if (!read) throw new CliFailure(`no bundle named "${slug}" (hermes bundles list).`, 1);
  if (!read.ok) throw new CliFailure(`bundle ${slug} is broken: ${read.error}`, 1);
  const installed = installedNames(home, io);
  const b = read.bundle;
  if (flags.json) {
    io.out(JSON.stringify({ ...b, missing: b.skills.filter((s) => !installed.has(s)) }, null, 2));
    return 0;
  }
  io.out(`/${b.slug}${b.name !== b.slug ? ` (${b.name})` : ""}`);
  if (b.description) io.out(`  ${b.description}`);
  for (const s of b.skills) io.out(`  - ${s}${installed.has(s) ? "" : "  (not installed)"}`);
  if (b.instruction) io.out(`  instruction: ${b.instruction}`);
  return 0;
}

interface CreateFlags {
  skill: string[];
  description?: string;
  instruction?: string;
  force?: boolean;
}

function createCli(home: string, io: CliIo, slug: string, flags: CreateFlags): number {
  const problem = bundleSlugProblem(slug);
  if (problem) throw new CliFailure(problem, 2);
  if (flags.skill.length === 0) throw new CliFailure("a bundle needs at least one --skill NAME.", 2);
  for (const s of flags.skill) {
    const bad = bundleSlugProblem(s);
    if (bad) throw new CliFailure(bad.replace("bundle name", "skill name"), 2);
  }
  let file: string;
  try {
    file = writeBundle(
      home,
      {
        slug,
        skills: [...new Set(flags.skill)],
        ...(flags.description ? { description: flags.description } : {}),
        ...(flags.instruction ? { instruction: flags.instruction } : {}),
      },
      flags.force === true,
    );
  } catch (error) {
    throw new CliFailure((error as Error).message, 1);
  }
  const installed = installedNames(home, io);
  const missing = flags.skill.filter((s) => !installed.has(s));
  if (missing.length) io.err(`hermes bundles: warning: not installed yet: ${missing.join(", ")}`);
  if (installed.has(slug))
    io.err(`hermes bundles: warning: a skill is also named ${slug}; /${slug} loads the skill.`);
  io.out(`Created ${file}; load it in a chat with /${slug} [request].`);
  return 0;
}

/** `hermes bundles …`. */
export const bundlesCommand: CliCommand = defineCommand({
  name: "bundles",
  description: "skill bundles: several skills loaded together with /<name> (skill-bundles/<name>.yaml)",
  needs: "home",
  defaultSubcommand: "list",
  parse: (root, run) => {
    root
      .command("list")
      .description("list bundles and their skills")
      .option("--json", "print JSON")
      .action(run(({ home, io }, flags: { json?: boolean }) => listCli(home, io, flags)));
    root
      .command("show")
      .description("show one bundle")
      .argument("<name>", "bundle name")
      .option("--json", "print JSON")
      .action(run(({ home, io }, name: string, flags: { json?: boolean }) => showCli(home, io, name, flags)));
    root
      .command("create")
      .description("create a bundle from installed skills")
      .argument("<name>", "bundle name (used as /<name>)")
      .option(
        "--skill <name>",
        "a skill to include; repeatable",
        (v: string, prev: string[]) => [...prev, v],
        [] as string[],
      )
      .option("-d, --description <text>", "one line shown in lists")
      .option("--instruction <text>", "text put before the skills when the bundle is loaded")
      .option("--force", "replace a bundle of that name")
      .action(run(({ home, io }, name: string, flags: CreateFlags) => createCli(home, io, name, flags)));
    root
      .command("delete")
      .description("delete a bundle (its skills stay installed)")
      .argument("<name>", "bundle name")
      .action(
        run(({ home, io }, name: string) => {
          if (!deleteBundle(home, name)) throw new CliFailure(`no bundle named "${name}".`, 1);
          io.out(`Deleted bundle ${name}.`);
          return 0;
        }),
      );
    root
      .command("reload")
      .description("re-read every bundle file and report broken ones (bundles are read at each use)")
      .action(
        run(({ home, io }) => {
          const all = listBundles(home);
          const broken = all.filter((b) => !b.ok);
          for (const b of broken) if (!b.ok) io.err(`${b.slug}: ${b.error}`);
          io.out(`Read ${all.length} bundle${all.length === 1 ? "" : "s"}: ${broken.length} broken.`);
          return broken.length > 0 ? 1 : 0;
        }),
      );
  },
});
