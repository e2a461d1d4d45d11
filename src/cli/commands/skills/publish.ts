/** `hermes skills publish NAME (--to TAP | --repo URL)`: scan, then push (publish.ts). */
import { discoverSkills } from "../../../knowledge/skills/discovery.js";
import { readFrontmatter } from "../../../knowledge/skills/hub/bundle.js";
import {
  execRunner,
  onPath,
  PublishError,
  preparePublish,
  publishSkill,
  repoTarget,
  tapTarget,
} from "../../../knowledge/skills/publish.js";
import type { MgmtCtx } from "./bundled.js";
import { CliFailure, findingLines, paintVerdict } from "./io.js";

export interface PublishFlags {
  to?: string;
  repo?: string;
  branch?: string;
  force?: boolean;
}

export async function publishCli({ home, io }: MgmtCtx, name: string, flags: PublishFlags): Promise<number> {
  if ((flags.to === undefined) === (flags.repo === undefined)) {
    throw new CliFailure("give where to publish: --to TAP or --repo URL (one of them).", 2);
  }
  const skill = discoverSkills({
    home,
    env: io.env,
    includeDisabled: true,
    includeOtherPlatforms: true,
  }).skills.find((s) => s.name === name);
  if (!skill) throw new CliFailure(`no installed skill named "${name}" (hermes skills list).`, 1);
  try {
    const target = flags.repo !== undefined ? repoTarget(flags.repo) : tapTarget(home, flags.to ?? "");
    io.err(`Scanning ${name} before publishing …`);
    const prepared = await preparePublish(skill.dir, name, flags.force === true);
    io.err(`Scan verdict: ${paintVerdict(io, prepared.report.verdict)}`);
    if (prepared.report.findings.length > 0) io.err(findingLines(io, prepared.report.findings).join("\n"));
    const useGh = onPath("gh", io.env);
    io.err(`Publishing to ${target.url} …`);
    const result = await publishSkill(prepared, target, {
      run: execRunner(io.env),
      ...(flags.branch ? { branch: flags.branch } : {}),
      useGh,
      description: readFrontmatter(prepared.files.get("SKILL.md")?.toString("utf8") ?? "").description ?? "",
    });
    if (!result.changed) {
      io.out(`${target.url} already holds this version of ${name} at ${result.repoPath}; nothing pushed.`);
      return 0;
    }
    io.out(
      result.pullRequest
        ? `Opened a pull request for ${name}: ${result.pullRequest}`
        : `Pushed ${name} to ${target.url} on branch ${result.branch} (${result.repoPath}).` +
            (target.githubRepo && !useGh ? " Install gh to open the pull request from here." : ""),
    );
    return 0;
  } catch (error) {
    if (error instanceof PublishError) {
      if (error.report) io.err(findingLines(io, error.report.findings).join("\n"));
      throw new CliFailure(error.message, error.exitCode);
    }
    throw error;
  }
}
