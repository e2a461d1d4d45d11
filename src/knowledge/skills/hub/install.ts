/**
 * Installing and uninstalling hub skills. Install: quarantine the fetched files under
 * `skills/.hub/quarantine/<name>`, scan them, apply the verdict under the source's trust level
 * (trust.ts: safe installs; caution installs from builtin and trusted sources and needs `force` or
 * a yes from `confirmCaution` from community ones; dangerous is always refused and its files stay
 * in the quarantine folder for review, never loaded as a skill), then move the folder into
 * `skills/<category>/<name>` and record it in lock.json, all under the lock file's flock. Every
 * install, update, uninstall and refusal is appended to the audit log.
 *
 * A skill of the same name that the hub did not install (bundled, agent-made or the user's own) is
 * never replaced: the user must uninstall or rename one of them. Re-installing a hub skill updates it.
 */
import { randomBytes } from "node:crypto";
import { lstat, mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { knowledgeStores } from "../../stores.js";
import {
  contentHash,
  HubError,
  readFrontmatter,
  type SkillBundle,
  safeRelPath,
  validateCategory,
  validateSkillName,
} from "./bundle.js";
import { listInstalledSkills } from "./installed.js";
import {
  appendAudit,
  hubDir,
  type LockData,
  type LockEntry,
  pythonIsoTime,
  quarantineDir,
  readLock,
  skillsRoot,
  updateLock,
} from "./lock.js";
import { type ScanReport, scanSkillBundle } from "./scan.js";
import { installDecision, type TrustLevel } from "./trust.js";

/** Trust recorded for a bundle whose source named none (folders, git, URLs, well-known). */
export const TRUST_LEVEL: TrustLevel = "community";

export interface InstallOptions {
  home: string;
  bundle: SkillBundle;
  /** Install under this name instead of the bundle's. */
  name?: string;
  /** `--category`; otherwise the installed copy's category on update, else the frontmatter's. */
  category?: string;
  /** Accept a caution verdict without asking. Never accepts a dangerous one. */
  force?: boolean;
  /** Asked about a caution verdict when not forced; absent when nobody can be asked. */
  confirmCaution?: (report: ScanReport) => Promise<boolean>;
  /** Asked before replacing a hub skill that came from another source; absent when nobody can be asked. */
  confirmReplace?: (entry: LockEntry) => Promise<boolean>;
  /** Answer yes to the replace question. */
  yes?: boolean;
  /** Clock in seconds. */
  now: () => number;
}

export type RefusalReason = "dangerous" | "needs_confirmation" | "declined" | "source_changed";

export type InstallOutcome =
  | {
      status: "installed" | "updated";
      name: string;
      /** Absolute folder the skill now lives in. */
      dir: string;
      relPath: string;
      report: ScanReport;
      contentHash: string;
    }
  | { status: "refused"; name: string; reason: RefusalReason; message: string; report?: ScanReport };

/**
 * Installs (or updates) a bundle. Returns the outcome; throws {@link HubError} for conflicts and
 * I/O problems (a name collision with a non-hub skill, an unsafe install path, a corrupt lock.json).
 */
export async function installBundle(options: InstallOptions): Promise<InstallOutcome> {
  const { home, bundle } = options;
  const trust: TrustLevel = bundle.trust ?? TRUST_LEVEL;
  const name = validateSkillName(options.name ?? bundle.name);
  const lock = await readLock(home);
  const existing = lock.installed[name];
  const relPath = installRelPath(name, options.category, existing, bundle);
  await assertInstallable(home, lock, name, relPath);
  // An explicit --name is the user's own choice; a name the source picked is checked.
  if (options.name === undefined) await assertDeclaredNameFree(home, lock, name, bundle);
  const audit = (action: "install" | "update" | "refuse", extra: Record<string, unknown>) =>
    appendAudit(
      home,
      {
        action,
        name,
        source: bundle.source,
        identifier: bundle.identifier,
        trust_level: trust,
        ...extra,
      },
      options.now(),
    );

  if (
    existing &&
    (existing.source !== bundle.source || existing.identifier !== bundle.identifier) &&
    !options.yes
  ) {
    const ok = options.confirmReplace ? await options.confirmReplace(existing) : undefined;
    if (ok !== true) {
      const message =
        ok === false
          ? "Cancelled; the installed skill was kept."
          : `${name} is installed from ${existing.source} ${existing.identifier}; replacing it with ${bundle.source} ${bundle.identifier} needs confirmation (pass -y).`;
      await audit("refuse", { reason: ok === false ? "declined replace" : "source changed, not confirmed" });
      return { status: "refused", name, reason: ok === false ? "declined" : "source_changed", message };
    }
  }

  const quarantine = join(quarantineDir(home), name);
  await writeQuarantine(quarantine, bundle.files);
  const report = scanSkillBundle(bundle.files);
  const findings = report.findings
    .filter((f) => f.severity === "critical" || f.severity === "high")
    .map(({ file, line, id, severity }) => ({ file, line, id, severity }));
  const refuse = async (reason: RefusalReason, message: string): Promise<InstallOutcome> => {
    await rm(quarantine, { recursive: true, force: true });
    await audit("refuse", { verdict: report.verdict, reason, findings });
    return { status: "refused", name, reason, message, report };
  };
  const decision = installDecision(trust, report.verdict);
  if (decision === "refuse") {
    // The quarantined copy stays under .hub/quarantine/<name> for review; nothing is installed.
    await audit("refuse", { verdict: report.verdict, reason: "dangerous", findings, quarantined: true });
    return {
      status: "refused",
      name,
      reason: "dangerous",
      message: `Refused ${name} (${bundle.source}, trust ${trust}): the scan found dangerous content. --force does not override this. The files are kept for review in skills/.hub/quarantine/${name}/.`,
      report,
    };
  }
  if (decision === "confirm" && !options.force) {
    if (!options.confirmCaution) {
      return refuse(
        "needs_confirmation",
        `${name} needs review (scan verdict: caution); pass --force to install it anyway, or run on a terminal to be asked.`,
      );
    }
    if (!(await options.confirmCaution(report))) return refuse("declined", "Cancelled; nothing installed.");
  }

  const hash = contentHash(bundle.files);
  const dir = await updateLock(home, async (current) => {
    // Another process may have installed something since the first check.
    await assertInstallable(home, current, name, relPath);
    const previous = current.installed[name];
    const target = resolveInstallDir(home, relPath, name);
    await assertNoSymlinks(home, relPath);
    await moveIntoPlace(home, quarantine, target);
    if (previous && previous.install_path !== relPath) {
      const old = safeInstallDir(home, previous.install_path, name);
      if (old) await rm(old, { recursive: true, force: true });
    }
    const stamp = pythonIsoTime(options.now());
    current.installed[name] = {
      ...(previous ?? {}),
      source: bundle.source,
      identifier: bundle.identifier,
      trust_level: trust,
      scan_verdict: report.verdict,
      content_hash: hash,
      install_path: relPath,
      files: [...bundle.files.keys()].sort(),
      metadata: bundle.metadata,
      installed_at: previous?.installed_at || stamp,
      updated_at: stamp,
    };
    return target;
  });
  const status = existing ? "updated" : "installed";
  await audit(existing ? "update" : "install", {
    verdict: report.verdict,
    content_hash: hash,
    ...(options.force && report.verdict !== "safe" ? { reason: "forced" } : {}),
  });
  // A shared backend (PostgreSQL) stores the skill for every instance, as the skill tools' writes.
  await knowledgeStores(home).skillSink?.saved({ name, dir, created: !existing });
  return { status, name, dir, relPath, report, contentHash: hash };
}

function installRelPath(
  name: string,
  category: string | undefined,
  existing: LockEntry | undefined,
  bundle: SkillBundle,
): string {
  let chosen = "";
  if (category !== undefined && category !== "") chosen = validateCategory(category);
  else if (existing) chosen = existing.install_path.split("/").slice(0, -1).join("/");
  else if (bundle.source === "official" && typeof bundle.metadata["category"] === "string") {
    // An official skill installs under the category folder it ships in.
    chosen = validateCategory(bundle.metadata["category"]);
  } else {
    const fm = readFrontmatter((bundle.files.get("SKILL.md") ?? Buffer.alloc(0)).toString("utf8"));
    if (fm.category) {
      try {
        chosen = validateCategory(fm.category.toLowerCase());
      } catch {
        chosen = ""; // An odd frontmatter category installs flat rather than failing.
      }
    }
  }
  return chosen ? `${chosen}/${name}` : name;
}

/** Refuses a name or place that belongs to a skill the hub did not install, or to a category folder. */
async function assertInstallable(home: string, lock: LockData, name: string, relPath: string): Promise<void> {
  const ours = lock.installed[name]?.install_path;
  for (const skill of await listInstalledSkills(home, lock)) {
    if (
      (skill.name === name || skill.dirName === name || skill.relPath === relPath) &&
      skill.relPath !== ours
    ) {
      const owner =
        skill.origin === "hub"
          ? `installed by the hub as "${lockNameFor(lock, skill.relPath)}"`
          : `a ${skill.origin} skill`;
      throw new HubError(
        `a skill named "${skill.name}" already exists at skills/${skill.relPath} (${owner}). ` +
          "The hub never replaces a skill it did not install: uninstall or rename that one, or install this one with --name OTHER.",
      );
    }
  }
  const root = skillsRoot(home);
  const parts = relPath.split("/");
  for (let i = 1; i < parts.length; i++) {
    const ancestor = join(root, ...parts.slice(0, i));
    if ((await lstat(join(ancestor, "SKILL.md")).catch(() => undefined))?.isFile()) {
      throw new HubError(
        `cannot install into ${parts.slice(0, i).join("/")}: it is a skill, not a category. Choose another --category.`,
      );
    }
  }
  const target = join(root, ...parts);
  const stat = await lstat(target).catch(() => undefined);
  if (stat && relPath !== ours) {
    const what = stat.isDirectory() ? `a folder (${(await readdir(target)).length} entries)` : "a file";
    throw new HubError(
      `skills/${relPath} already exists and is ${what} the hub did not create; move it or choose another --name or --category.`,
    );
  }
}

/**
 * A SKILL.md may declare a `name` other than the one it installs under (an index can list a skill
 * as "notes" whose SKILL.md says `name: git`). The agent finds skills by that declared name, so it
 * must not shadow a skill already there.
 */
async function assertDeclaredNameFree(
  home: string,
  lock: LockData,
  name: string,
  bundle: SkillBundle,
): Promise<void> {
  const declared = readFrontmatter((bundle.files.get("SKILL.md") ?? Buffer.alloc(0)).toString("utf8")).name;
  if (!declared || declared === name) return;
  const ours = lock.installed[name]?.install_path;
  const clash = (await listInstalledSkills(home, lock)).find(
    (s) => (s.name === declared || s.dirName === declared) && s.relPath !== ours,
  );
  if (clash) {
    throw new HubError(
      `${name}'s SKILL.md calls itself "${declared}", the name of the skill at skills/${clash.relPath}; refusing to shadow it.`,
    );
  }
}

function lockNameFor(lock: LockData, relPath: string): string {
  return Object.entries(lock.installed).find(([, e]) => e.install_path === relPath)?.[0] ?? relPath;
}

async function writeQuarantine(dir: string, files: ReadonlyMap<string, Buffer>): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  // Search tools that honour .ignore (ripgrep) stay out of unvetted files.
  await writeFile(
    join(dirname(dirname(dir)), ".ignore"),
    "# hub internals: quarantine and caches\n*\n",
  ).catch(() => {});
  for (const [rel, content] of files) {
    const safe = safeRelPath(rel);
    if (safe !== rel) throw new HubError(`refused unsafe file path "${rel}" in the skill.`);
    const dest = join(dir, ...safe.split("/"));
    await mkdir(dirname(dest), { recursive: true });
    await writeFile(dest, content, { flag: "wx" });
  }
}

/** Renames the quarantine into place, keeping the previous copy until the new one is there. */
async function moveIntoPlace(home: string, quarantine: string, target: string): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  const backup = join(hubDir(home), `.replaced-${randomBytes(4).toString("hex")}`);
  const hadPrevious = (await lstat(target).catch(() => undefined)) !== undefined;
  if (hadPrevious) await rename(target, backup);
  try {
    await rename(quarantine, target);
  } catch (error) {
    if (hadPrevious) await rename(backup, target).catch(() => {});
    throw new HubError(`could not move the skill into ${target}: ${(error as Error).message}`);
  }
  if (hadPrevious) await rm(backup, { recursive: true, force: true });
}

/**
 * The absolute folder for a lock `install_path`, after checking that it is relative, has no `..`,
 * and ends with the skill's name: what uninstall deletes must lie inside the skills folder.
 */
export function resolveInstallDir(home: string, relPath: string, name: string): string {
  const safe = safeRelPath(relPath);
  if (!safe || safe !== relPath || safe.split("/").pop() !== name) {
    throw new HubError(
      `lock.json records an unsafe install path "${relPath}" for ${name}; refusing to touch it.`,
    );
  }
  return join(skillsRoot(home), ...safe.split("/"));
}

function safeInstallDir(home: string, relPath: string, name: string): string | undefined {
  try {
    return resolveInstallDir(home, relPath, name);
  } catch {
    return undefined;
  }
}

/** Refuses a path whose folders (below the skills root) include a symlink, which could lead outside. */
async function assertNoSymlinks(home: string, relPath: string): Promise<void> {
  let current = skillsRoot(home);
  for (const part of relPath.split("/")) {
    current = join(current, part);
    const stat = await lstat(current).catch(() => undefined);
    if (stat?.isSymbolicLink())
      throw new HubError(`skills/${relPath} goes through a symlink (${current}); refusing.`);
  }
}

export interface UninstallResult {
  name: string;
  relPath: string;
  /** False when the folder was already gone and only the lock entry was removed. */
  removedFiles: boolean;
}

/** Removes a hub-installed skill and its lock entry. Throws {@link HubError} for anything else. */
export async function uninstallSkill(
  home: string,
  name: string,
  now: () => number,
): Promise<UninstallResult> {
  const result = await updateLock(home, async (lock) => {
    const entry = lock.installed[name];
    if (!entry) {
      const local = (await listInstalledSkills(home, lock)).find(
        (s) => s.name === name || s.dirName === name,
      );
      throw new HubError(
        local
          ? `${name} was not installed by the hub (it is a ${local.origin} skill at skills/${local.relPath}); remove its folder yourself if you mean to.`
          : `no hub-installed skill named "${name}". See: hermes skills list --source hub`,
      );
    }
    const dir = resolveInstallDir(home, entry.install_path, name);
    await assertNoSymlinks(home, entry.install_path);
    const exists = (await lstat(dir).catch(() => undefined)) !== undefined;
    if (exists) await rm(dir, { recursive: true, force: true });
    delete lock.installed[name];
    return { name, relPath: entry.install_path, removedFiles: exists, entry };
  });
  await appendAudit(
    home,
    {
      action: "uninstall",
      name,
      source: result.entry.source,
      identifier: result.entry.identifier,
      trust_level: result.entry.trust_level,
      reason: "user_request",
    },
    now(),
  );
  await knowledgeStores(home).skillSink?.deleted({
    name: result.name,
    dir: resolveInstallDir(home, result.relPath, result.name),
  });
  return { name: result.name, relPath: result.relPath, removedFiles: result.removedFiles };
}
