import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { folderChecks, permissionChecks } from "../../../../src/cli/doctor/checks-home.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), "hermes-doctor-"));
  dirs.push(dir);
  return dir;
}

describe.skipIf(process.platform === "win32")("permissionChecks", () => {
  it("a group- or world-readable .env is a problem whose repair makes it 600", async () => {
    const home = temp();
    writeFileSync(join(home, ".env"), "KEY=x\n");
    chmodSync(join(home, ".env"), 0o604);
    const [env] = permissionChecks(home);
    expect(env).toMatchObject({ status: "fail", fix: `chmod 600 ${join(home, ".env")}` });
    await env?.repair?.();
    expect(statSync(join(home, ".env")).mode & 0o777).toBe(0o600);
    expect(permissionChecks(home)[0]?.status).toBe("ok");
  });

  it("a symlinked .env is reported but never chmodded through the link", () => {
    const home = temp();
    const elsewhere = join(temp(), "shared.txt");
    writeFileSync(elsewhere, "not mine to change\n");
    chmodSync(elsewhere, 0o644);
    symlinkSync(elsewhere, join(home, ".env"));
    const [env] = permissionChecks(home);
    expect(env?.status).toBe("warn");
    expect(env?.repair).toBeUndefined();
    expect(statSync(elsewhere).mode & 0o777).toBe(0o644);
  });

  it("owner-only modes and missing files are fine", () => {
    const home = temp();
    writeFileSync(join(home, "auth.json"), "{}", { mode: 0o400 });
    expect(permissionChecks(home).map((l) => [l.name, l.status, l.detail])).toEqual([
      [".env permissions", "ok", "no file"],
      ["auth.json permissions", "ok", "mode 400"],
    ]);
  });
});

describe("folderChecks", () => {
  it("missing folders are a warning whose repair creates them", async () => {
    const home = join(temp(), "home");
    const [line] = folderChecks(home);
    expect(line?.status).toBe("warn");
    await line?.repair?.();
    expect(statSync(join(home, "logs")).isDirectory()).toBe(true);
    expect(folderChecks(home)).toEqual([{ group: "Home", name: "folders", status: "ok", detail: home }]);
  });

  it("a file where a folder belongs is a problem with no automatic repair", () => {
    const home = temp();
    for (const dir of ["memories", "skills", "sessions", "cron"]) mkdirSync(join(home, dir));
    writeFileSync(join(home, "logs"), "oops");
    const lines = folderChecks(home);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      status: "fail",
      detail: `${join(home, "logs")} is a file, not a folder`,
    });
    expect(lines[0]?.repair).toBeUndefined();
  });
});
