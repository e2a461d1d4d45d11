import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";

/** A fresh temp HERMES_HOME per call, removed after the test. */
export function useTempHome(): () => string {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), "hermes-config-"));
    made.push(dir);
    return dir;
  };
}

export function writeConfig(home: string, text: string): string {
  const path = join(home, "config.yaml");
  writeFileSync(path, text);
  return path;
}
