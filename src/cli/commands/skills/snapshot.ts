/** `hermes skills snapshot export FILE | import FILE [--force]` (snapshot.ts). */
import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { HubError } from "../../../knowledge/skills/hub/bundle.js";
import {
  exportSnapshot,
  importSnapshot,
  MAX_SNAPSHOT_BYTES,
  parseSnapshot,
} from "../../../knowledge/skills/snapshot.js";
import { atomicWriteFileSync } from "../../../util/atomic-write.js";
import type { MgmtCtx } from "./bundled.js";
import { CliFailure, findingLines, plural } from "./io.js";

export async function snapshotExportCli({ home, io }: MgmtCtx, file: string): Promise<number> {
  const snapshot = await exportSnapshot(home, io.now());
  const text = `${JSON.stringify(snapshot, null, 2)}\n`;
  if (file === "-") {
    io.out(text.replace(/\n$/, ""));
    return 0;
  }
  const path = resolve(io.cwd, file);
  atomicWriteFileSync(path, text);
  io.out(
    `Wrote ${path}: ${plural(snapshot.skill_files.length, "skill")} with their files, ` +
      `${plural(snapshot.skills.length, "hub install")} recorded.`,
  );
  return 0;
}

export async function snapshotImportCli(
  { home, io }: MgmtCtx,
  file: string,
  flags: { force?: boolean },
): Promise<number> {
  const path = resolve(io.cwd, file);
  let text: string;
  try {
    if (statSync(path).size > MAX_SNAPSHOT_BYTES) {
      throw new CliFailure(
        `${path} is larger than ${MAX_SNAPSHOT_BYTES / 1024 / 1024} MiB; not a snapshot.`,
        2,
      );
    }
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof CliFailure) throw error;
    throw new CliFailure(`cannot read ${path}: ${(error as Error).message}`, 2);
  }
  let result: Awaited<ReturnType<typeof importSnapshot>>;
  try {
    result = await importSnapshot(home, parseSnapshot(text, path), {
      ...(flags.force ? { force: true } : {}),
      nowSeconds: io.now(),
    });
  } catch (error) {
    if (error instanceof HubError) throw new CliFailure(error.message, error.exitCode);
    throw error;
  }
  for (const row of result.rows) {
    io.out(`${row.status.padEnd(11)} ${row.name}  ${row.message}`);
    if (row.report && (row.status === "quarantined" || row.status === "refused")) {
      io.err(findingLines(io, row.report.findings, "high").join("\n"));
    }
  }
  for (const s of result.sourceOnly) {
    io.err(
      `${s.name}: recorded from ${s.source} without files; reinstall with: hermes skills install ${s.identifier}`,
    );
  }
  for (const tap of result.taps) {
    const line = `tap ${tap.status.padEnd(7)} ${tap.repo}  ${tap.message}`;
    if (tap.status === "skipped") io.err(line);
    else io.out(line);
  }
  if (result.optOutApplied) io.err("The snapshot's bundled-skill opt-outs were applied.");
  const count = (status: string) => result.rows.filter((r) => r.status === status).length;
  io.err(
    `Imported ${count("installed") + count("replaced")} of ${plural(result.rows.length, "skill")}: ` +
      `${count("skipped")} skipped (exist), ${count("quarantined")} quarantined, ${count("refused")} refused.`,
  );
  return count("quarantined") + count("refused") > 0 ? 1 : 0;
}
