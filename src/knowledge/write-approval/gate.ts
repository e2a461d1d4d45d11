/**
 * The write-approval switch and the words around a staged write. `memory.write_approval` and
 * `skills.write_approval` (default false) gate the agent's writes to MEMORY.md/USER.md and to
 * skills, from a user's turn and from the background review alike. Pure.
 */
import type { Subsystem } from "./pending.js";

/** Values Python Hermes accepts as "on" in a hand-edited config (YAML already parses on/off/yes/no). */
const TRUTHY = new Set(["on", "true", "yes", "1", "approve", "enabled"]);

/** Whether `<subsystem>.write_approval` is on in `config`; anything unset or unknown is off. */
export function writeApprovalEnabled(
  config: Readonly<Record<string, unknown>>,
  subsystem: Subsystem,
): boolean {
  const section = config[subsystem];
  if (!section || typeof section !== "object" || Array.isArray(section)) return false;
  const value = (section as Record<string, unknown>).write_approval;
  if (typeof value === "boolean") return value;
  return typeof value === "string" && TRUTHY.has(value.trim().toLowerCase());
}

/**
 * What the model reads when its write was staged. It must not mistake staging for saving, nor
 * try another way to make the change (the user decides).
 */
export function stagedMessage(subsystem: Subsystem, id: string): string {
  return (
    `Not saved yet: staged for the user's review because ${subsystem}.write_approval is on. It takes ` +
    `effect only if the user approves it (/${subsystem} approve ${id}). Do not retry it or make the ` +
    "change another way; tell the user it is waiting for their approval if it matters to them."
  );
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");

function oneLine(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The `description:` of a SKILL.md's frontmatter, if any (at most 140 characters). */
function frontmatterDescription(content: string): string {
  const match = /^description:\s*(.+)$/m.exec(content);
  return match?.[1]
    ? match[1]
        .trim()
        .replace(/^['"]|['"]$/g, "")
        .slice(0, 140)
    : "";
}

const lineCount = (text: string): number => (text ? text.split("\n").length : 0);

/** One line saying what a staged skill write does, as upstream's `skill_gist` words it. */
export function skillGist(payload: Readonly<Record<string, unknown>>): string {
  const action = str(payload.action);
  const name = str(payload.name);
  const content = str(payload.content);
  const filePath = str(payload.file_path);
  if ((action === "create" || action === "edit") && content) {
    const description = frontmatterDescription(content);
    const size =
      content.length >= 1024 ? `${Math.floor(content.length / 1024) + 1} KB` : `${content.length} chars`;
    return `${action === "create" ? "create" : "rewrite"} '${name}'${description ? ` — ${description}` : ""} (${size})`;
  }
  if (action === "patch") {
    const added = lineCount(str(payload.new_string));
    const removed = lineCount(str(payload.old_string));
    return `patch '${name}' ${filePath || "SKILL.md"} (+${added}/-${removed} lines)`;
  }
  if (action === "write_file") return `write ${filePath} in '${name}'`;
  if (action === "remove_file") return `remove ${filePath} from '${name}'`;
  if (action === "delete") return `delete skill '${name}'`;
  return `${action} '${name}'`;
}

/** One line saying what a staged memory write does (`add to user profile: …`). */
export function memorySummary(payload: Readonly<Record<string, unknown>>): string {
  const label = payload.target === "user" ? "user profile" : "memory";
  const action = str(payload.action);
  if (action === "batch") {
    const ops = Array.isArray(payload.operations) ? payload.operations : [];
    const parts = ops.map((op) => {
      const o = (op && typeof op === "object" ? op : {}) as Record<string, unknown>;
      const a = str(o.action);
      return a === "remove" ? `remove: ${str(o.old_text)}` : `${a}: ${str(o.content)}`;
    });
    return `apply ${ops.length} op(s) to ${label}: ${oneLine(parts.join("; "))}`;
  }
  if (action === "add") return `add to ${label}: ${oneLine(str(payload.content))}`;
  if (action === "replace") {
    return `replace in ${label}: ${oneLine(`${str(payload.old_text)} → ${str(payload.content)}`)}`;
  }
  if (action === "remove") return `remove from ${label}: ${oneLine(str(payload.old_text))}`;
  return `${action} ${label}`;
}
