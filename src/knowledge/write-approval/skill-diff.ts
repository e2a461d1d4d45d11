/**
 * What a staged skill write would change, against the skill as it is now: the fingerprint of the
 * file it replaces (recorded when staging, compared when approving) and the text for
 * `/skills diff ID` (the full SKILL.md for a create, a unified diff otherwise). Reads files only.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createTwoFilesPatch } from "diff";
import { skillDirHash } from "../skills/dir-hash.js";
import { findAnySkill } from "../skills/manage.js";
import { resolveInsideSkill, splitRelativePath } from "../skills/paths.js";
import type { SkillMeta, SkillsConfig } from "../skills/types.js";
import type { PendingBase, PendingRecord } from "./pending.js";

export interface SkillLookup {
  home: string;
  config?: SkillsConfig | undefined;
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");

/** The file a payload changes, relative to its skill folder: SKILL.md, a support file, or "." (all). */
function targetLabel(payload: Readonly<Record<string, unknown>>): string {
  const action = str(payload.action);
  if (action === "delete") return ".";
  if (action === "create" || action === "edit") return "SKILL.md";
  const filePath = str(payload.file_path).trim();
  return !filePath || /^(?:\.\/)?SKILL\.md$/.test(filePath) ? "SKILL.md" : filePath;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** The absolute path of `label` inside `skill`, or undefined when it names no file there. */
function fileIn(skill: SkillMeta, label: string): string | undefined {
  if (label === "SKILL.md") return skill.file;
  const parts = splitRelativePath(label);
  if (!Array.isArray(parts)) return undefined;
  const target = resolveInsideSkill(skill.dir, parts);
  return typeof target === "string" ? target : undefined;
}

const sha256 = (data: string | Buffer): string => createHash("sha256").update(data).digest("hex");

/** The fingerprint of what the write replaces now (the file, or the whole folder for a delete). */
export function skillBase(ctx: SkillLookup, payload: Readonly<Record<string, unknown>>): PendingBase {
  const file = targetLabel(payload);
  const skill = findAnySkill(ctx, str(payload.name).trim());
  if (!skill) return { file, sha256: null };
  if (file === ".") {
    try {
      return { file, sha256: skillDirHash(skill.dir) };
    } catch {
      return { file, sha256: null };
    }
  }
  const path = fileIn(skill, file);
  let bytes: Buffer | undefined;
  try {
    bytes = path ? readFileSync(path) : undefined;
  } catch {
    bytes = undefined;
  }
  return { file, sha256: bytes ? sha256(bytes) : null };
}

/**
 * Why approving `record` now could overwrite a change made since it was staged, or undefined. Only
 * writes that replace a whole file or folder are checked (edit, write_file, remove_file, delete): a
 * patch replays its find-and-replace on the current text and fails by itself when that text is
 * gone, and a create fails when the name was taken meanwhile. Records without a fingerprint
 * (staged by Python Hermes) are not checked.
 */
export function skillStaleReason(ctx: SkillLookup, record: PendingRecord): string | undefined {
  const action = str(record.payload.action);
  if (!["edit", "write_file", "remove_file", "delete"].includes(action)) return undefined;
  const staged = record.base;
  if (!staged) return undefined;
  const now = skillBase(ctx, record.payload);
  if (now.file !== staged.file || now.sha256 === staged.sha256) return undefined;
  const name = str(record.payload.name);
  const what = staged.file === "." ? `skill '${name}'` : `${staged.file} of skill '${name}'`;
  if (now.sha256 === null) return `${what} no longer exists`;
  if (staged.sha256 === null) return `${what} was created after this write was staged`;
  return `${what} changed after this write was staged`;
}

/** The text `/skills diff ID` shows: the new SKILL.md of a create, or a unified diff against now. */
export function skillPendingDiff(ctx: SkillLookup, record: PendingRecord): string {
  const payload = record.payload;
  const action = str(payload.action);
  const name = str(payload.name);
  if (action === "create") return str(payload.content);
  if (action === "delete") return `delete skill '${name}' (the whole folder)`;
  if (action === "remove_file") return `remove file ${str(payload.file_path)} from skill '${name}'`;
  const label = targetLabel(payload);
  const skill = findAnySkill(ctx, name.trim());
  const path = skill ? fileIn(skill, label) : undefined;
  const current = (path ? readText(path) : undefined) ?? "";
  let next: string;
  if (action === "patch") {
    const oldString = str(payload.old_string);
    const newString = str(payload.new_string);
    if (!current || !oldString || !current.includes(oldString)) {
      return (
        `patch ${label} of '${name}': the text to replace is not in the current file, so approving ` +
        `will fail.\n--- old_string\n${oldString}\n+++ new_string\n${newString}`
      );
    }
    next =
      payload.replace_all === true
        ? current.split(oldString).join(newString)
        : current.replace(oldString, () => newString);
  } else if (action === "edit") {
    next = str(payload.content);
  } else if (action === "write_file") {
    next = str(payload.file_content);
  } else {
    return `${action} on '${name}'`;
  }
  const patch = createTwoFilesPatch(`a/${label}`, `b/${label}`, current, next, "", "", { context: 3 });
  // Drop the "Index"/"====" header lines; keep ---/+++ and the hunks.
  const body = patch
    .split("\n")
    .filter((line) => !/^(Index:|={10,})/.test(line))
    .join("\n")
    .trimEnd();
  return /\n@@/.test(body) ? body : "(no textual change)";
}
