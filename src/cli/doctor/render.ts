/**
 * The text of `hermes doctor`: lines grouped under their headings, each `✓`, `⚠` or `✗` with its
 * detail and, below a problem, `→` and the fix. Pure; colours only when asked.
 */
import type { DoctorLine } from "./types.js";

export interface RenderOptions {
  color: boolean;
}

const MARK = { ok: "✓", warn: "⚠", fail: "✗" } as const;
const PAINT = { ok: "\x1b[32m", warn: "\x1b[33m", fail: "\x1b[31m" } as const;

export function renderDoctor(lines: readonly DoctorLine[], options: RenderOptions): string {
  const out: string[] = [];
  let group: string | undefined;
  for (const line of lines) {
    if (line.group !== group) {
      if (group !== undefined) out.push("");
      group = line.group;
      out.push(options.color ? `\x1b[1m${group}\x1b[0m` : group);
    }
    const mark = options.color ? `${PAINT[line.status]}${MARK[line.status]}\x1b[0m` : MARK[line.status];
    out.push(`  ${mark} ${line.name}: ${line.detail}`);
    if (line.status !== "ok" && line.fix) out.push(`      → ${line.fix}`);
  }
  out.push("", summary(lines));
  return `${out.join("\n")}\n`;
}

/** `2 problems, 1 warning` / `All checks passed.` */
export function summary(lines: readonly DoctorLine[]): string {
  const fails = lines.filter((l) => l.status === "fail").length;
  const warns = lines.filter((l) => l.status === "warn").length;
  const fixable = lines.filter((l) => l.status !== "ok" && l.repair).length;
  if (fails === 0 && warns === 0) return "All checks passed.";
  const parts = [
    fails > 0 ? `${fails} problem${fails === 1 ? "" : "s"}` : "",
    warns > 0 ? `${warns} warning${warns === 1 ? "" : "s"}` : "",
  ].filter((p) => p !== "");
  const hint = fixable > 0 ? ` ${fixable} can be repaired with: hermes doctor --fix` : "";
  return `${parts.join(", ")}.${hint}`;
}
