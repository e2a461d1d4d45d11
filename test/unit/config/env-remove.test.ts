import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { removeEnvVar } from "../../../src/config/env-file.js";

function home(text?: string): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-env-"));
  if (text !== undefined) writeFileSync(join(dir, ".env"), text);
  return dir;
}

describe("removeEnvVar", () => {
  it("removes every assignment of the name, a multi-line quoted value whole, and keeps the rest", () => {
    const dir = home(
      '# keys\nOPENROUTER_API_KEY=sk-or-1\nCOPILOT_GITHUB_TOKEN=ghu_a\nexport COPILOT_GITHUB_TOKEN="ghu_b\nstill"\nCOPILOT_GITHUB_TOKEN_OLD=x\n',
    );
    expect(removeEnvVar(dir, "COPILOT_GITHUB_TOKEN")).toBe(true);
    expect(readFileSync(join(dir, ".env"), "utf8")).toBe(
      "# keys\nOPENROUTER_API_KEY=sk-or-1\nCOPILOT_GITHUB_TOKEN_OLD=x\n",
    );
    expect(statSync(join(dir, ".env")).mode & 0o777).toBe(0o600);
  });

  it("leaves the file alone when the name is absent or the file is missing", () => {
    const dir = home("A=1\n");
    expect(removeEnvVar(dir, "B")).toBe(false);
    expect(readFileSync(join(dir, ".env"), "utf8")).toBe("A=1\n");
    expect(removeEnvVar(home(), "B")).toBe(false);
  });

  it("refuses a name that is not a variable name (no pattern injection)", () => {
    const dir = home("A=1\n");
    expect(() => removeEnvVar(dir, ".*")).toThrow(/invalid environment variable name/);
    expect(readFileSync(join(dir, ".env"), "utf8")).toBe("A=1\n");
  });
});
