/** Which `hermes` an alias runs: this installation's launcher, else PATH's, else the bare word. */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { hermesLauncher } from "../../../../src/cli/profiles/profile-extras.js";

describe("hermesLauncher", () => {
  it("prefers the launcher running now, so the alias runs this installation", () => {
    expect(hermesLauncher({ PATH: "/usr/bin" }, "/opt/hermes-ts/bin/hermes")).toBe(
      "/opt/hermes-ts/bin/hermes",
    );
  });

  it("falls back to hermes on PATH (absolute entries only), then to the bare word", () => {
    const dir = mkdtempSync(join(tmpdir(), "hermes-launcher-"));
    const bin = join(dir, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "hermes"), "#!/bin/sh\n");
    chmodSync(join(bin, "hermes"), 0o755);
    expect(hermesLauncher({ PATH: `relative/bin:${bin}` }, "/src/cli/main.ts")).toBe(join(bin, "hermes"));
    expect(hermesLauncher({ PATH: "" }, undefined)).toBe("hermes");
  });
});
