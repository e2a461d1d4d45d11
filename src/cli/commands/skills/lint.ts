/**
 * `hermes skills lint [NAME] [--all] [--json]`: the quality checks of lint.ts over every installed
 * skill (the home's and skills.external_dirs'), one report per skill. Bundled skills and official
 * hub skills are held to the house rules strictly; a user's own skills get those as warnings.
 * `--all` also checks the library this package ships (skills/ and optional-skills/). Exit 1 when
 * any skill has an error.
 */
import { existsSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import pc from "picocolors";
import type { HermesConfig } from "../../../config/defaults.js";
import { bundledSkillsDir } from "../../../knowledge/skills/bundled.js";
import { discoverSkills } from "../../../knowledge/skills/discovery.js";
import { readLock } from "../../../knowledge/skills/hub/lock.js";
import { type LintProblem, lintSkill, skillDirsUnder } from "../../../knowledge/skills/lint.js";
import { skillsRoot } from "../../../knowledge/skills/paths.js";
import type { SkillsConfig } from "../../../knowledge/skills/types.js";
import { toolsetNames } from "../../../tools/toolsets.js";
import { CliFailure, plural, type SkillsIo, style } from "./io.js";

export interface LintRow {
  name: string;
  dir: string;
  /** bundled, official, hub, agent, user, or shipped (the package's own library, with --all). */
  origin: string;
  strict: boolean;
  errors: number;
  warnings: number;
  problems: LintProblem[];
}

interface Target {
  dir: string;
  origin: string;
  strict: boolean;
  category: string | undefined;
}

/** The category a folder layout implies: the parent folder, unless the skill sits at the root. */
function layoutCategory(root: string, dir: string): string | undefined {
  const parent = dirname(dir);
  return parent === root ? undefined : basename(parent);
}

export async function lintTargets(
  home: string,
  config: SkillsConfig | undefined,
  env: Readonly<Record<string, string | undefined>>,
  all: boolean,
): Promise<Target[]> {
  let official = new Set<string>();
  try {
    const lock = await readLock(home);
    official = new Set(
      Object.values(lock.installed)
        .filter((e) => e.source === "official")
        .map((e) => join(skillsRoot(home), ...e.install_path.split("/"))),
    );
  } catch {
    // An unreadable lock only loses the "official" label; the skills are still linted.
  }
  const root = skillsRoot(home);
  const { skills } = discoverSkills({
    home,
    config,
    env,
    includeDisabled: true,
    includeOtherPlatforms: true,
  });
  const targets: Target[] = skills.map((s) => {
    const origin = official.has(s.dir) ? "official" : s.origin;
    return {
      dir: s.dir,
      origin,
      strict: origin === "bundled" || origin === "official",
      category: s.source === "home" ? layoutCategory(root, s.dir) : undefined,
    };
  });
  if (all) {
    const bundled = bundledSkillsDir(env);
    for (const lib of bundled ? [bundled, join(dirname(bundled), "optional-skills")] : []) {
      if (!existsSync(lib)) continue;
      for (const s of skillDirsUnder(lib))
        targets.push({ dir: s.dir, origin: "shipped", strict: true, category: s.category });
    }
  }
  return targets;
}

export async function lintCli(
  home: string,
  config: HermesConfig,
  name: string | undefined,
  flags: { all?: boolean; json?: boolean },
  io: SkillsIo,
): Promise<number> {
  const skillsConfig = config.skills as SkillsConfig;
  let targets = await lintTargets(home, skillsConfig, io.env, flags.all === true);
  const knownSkills = new Set(targets.map((t) => basename(t.dir)));
  if (name !== undefined) {
    targets = targets.filter((t) => basename(t.dir) === name);
    if (targets.length === 0)
      throw new CliFailure(`no installed skill named "${name}" (hermes skills list).`, 1);
  }
  const knownToolsets = new Set(toolsetNames());
  const rows: LintRow[] = targets.map((t) => {
    const r = lintSkill(t.dir, {
      strict: t.strict,
      ...(t.category !== undefined ? { expectedCategory: t.category } : {}),
      knownToolsets,
      knownSkills,
    });
    return {
      name: r.name,
      dir: t.dir,
      origin: t.origin,
      strict: t.strict,
      errors: r.problems.filter((p) => p.severity === "error").length,
      warnings: r.problems.filter((p) => p.severity === "warning").length,
      problems: r.problems,
    };
  });
  const failed = rows.some((r) => r.errors > 0);
  if (flags.json) {
    io.out(JSON.stringify(rows, null, 2));
    return failed ? 1 : 0;
  }
  if (rows.length === 0) {
    io.out("No skills installed.");
    return 0;
  }
  for (const r of rows) {
    const mark =
      r.errors > 0
        ? style(io, pc.red, "✗")
        : r.warnings > 0
          ? style(io, pc.yellow, "!")
          : style(io, pc.green, "✓");
    const label = `${r.origin}${r.strict ? ", strict" : ""}`;
    io.out(`${mark} ${style(io, pc.cyan, r.name)}  ${style(io, pc.dim, `(${label}) ${r.dir}`)}`);
    for (const p of r.problems) {
      const sev = p.severity === "error" ? style(io, pc.red, "error  ") : style(io, pc.yellow, "warning");
      io.out(`    ${sev} ${p.message}`);
    }
  }
  const errors = rows.filter((r) => r.errors > 0).length;
  const warned = rows.filter((r) => r.errors === 0 && r.warnings > 0).length;
  io.err(
    `Linted ${plural(rows.length, "skill")}: ${errors} with errors, ${warned} with warnings only, ` +
      `${rows.length - errors - warned} clean.`,
  );
  return failed ? 1 : 0;
}
