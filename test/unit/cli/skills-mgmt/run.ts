// Runs `hermes skills …` in-process for the skill-management tests, with a chosen bundled folder.
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { runSkillsCommand } from "../../../../src/cli/commands/skills.js";
import { sink } from "../../../support/text-sink.js";
import { skillMd, writeTree } from "../../knowledge/skills/hub/helpers.js";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOpts {
  /** The package's bundled skills folder (default: none, so nothing is seeded). */
  bundled?: string;
  /** Makes stdin a terminal that types this answer. */
  answer?: string;
  cwd?: string;
  env?: Record<string, string>;
}

export async function skills(home: string, args: string[], opts: RunOpts = {}): Promise<Run> {
  const stdout = sink();
  const stderr = sink();
  const stdin = new PassThrough();
  if (opts.answer !== undefined) {
    Object.assign(stdin, { isTTY: true });
    stdin.write(`${opts.answer}\n`);
  }
  const code = await runSkillsCommand(args, {
    env: {
      HERMES_HOME: home,
      NO_COLOR: "1",
      HERMES_BUNDLED_SKILLS: opts.bundled ?? join(home, "no-bundled-skills"),
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      ...opts.env,
    },
    stdin: stdin as unknown as NodeJS.ReadStream,
    stdout,
    stderr,
    now: () => 1_700_000_000,
    ...(opts.cwd ? { cwd: opts.cwd } : {}),
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** A strict-lint-clean SKILL.md for `name` in `category`. */
export function goodSkill(
  name: string,
  category: string,
  description = `Handle ${name} tasks well.`,
): string {
  return skillMd(
    name,
    description,
    `version: 1.0.0\nauthor: Hermes-TS\nlicense: MIT\ncategory: ${category}\ntags: [${category}]\n`,
    `# ${name}\n\n## When to use\n\nWhen ${name} is asked for.\n\n## Procedure\n\n1. Run \`ls\` with terminal.\n\n` +
      "## Pitfalls\n\n- None known.\n\n## Verification\n\nThe listing shows the file.\n",
  );
}

/** A package-like bundled folder with the given skills (`category/name` → SKILL.md text or tree). */
export function bundledTree(dir: string, skills: Record<string, Record<string, string>>): string {
  for (const [rel, files] of Object.entries(skills)) writeTree(join(dir, rel), files);
  return dir;
}
