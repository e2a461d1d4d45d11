import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ImportError, importBackup } from "../../../../src/cli/backup/restore.js";
import { ZipWriter } from "../../../../src/util/zip.js";

async function archive(dir: string, members: Record<string, string>): Promise<string> {
  const path = join(dir, "backup.zip");
  const zip = new ZipWriter(path);
  for (const [name, text] of Object.entries(members)) await zip.addBuffer(name, text, { mtime: new Date() });
  zip.close();
  return path;
}

describe("importBackup", () => {
  it("never writes through a symlink that leads out of the home", async () => {
    const d = mkdtempSync(join(tmpdir(), "hermes-restore-"));
    const home = join(d, "home");
    const outside = join(d, "outside");
    mkdirSync(home);
    mkdirSync(outside);
    symlinkSync(outside, join(home, "memories"));
    symlinkSync(join(outside, "target.yaml"), join(home, "SOUL.md"));
    const zip = await archive(d, {
      "config.yaml": "model: m\n",
      "memories/MEMORY.md": "planted",
      "SOUL.md": "planted",
    });
    const summary = await importBackup(zip, home);
    expect(summary.restored).toBe(1);
    expect(summary.errors.join("\n")).toMatch(/memories is a symlink/);
    expect(summary.errors.join("\n")).toMatch(/SOUL\.md is a symlink/);
    expect(existsSync(join(outside, "MEMORY.md"))).toBe(false);
    expect(existsSync(join(outside, "target.yaml"))).toBe(false);
  });

  it("strips a wrapping directory and refuses an archive that is not a Hermes home", async () => {
    const d = mkdtempSync(join(tmpdir(), "hermes-restore-"));
    const zip = await archive(d, {
      ".hermes/config.yaml": "model: wrapped\n",
      ".hermes/skills/a/SKILL.md": "s",
    });
    const home = join(d, "home");
    const summary = await importBackup(zip, home);
    expect(summary.prefix).toBe(".hermes/");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe("model: wrapped\n");
    expect(existsSync(join(home, "skills/a/SKILL.md"))).toBe(true);

    const other = mkdtempSync(join(tmpdir(), "hermes-restore-"));
    const photos = await archive(other, { "photos/cat.jpg": "meow" });
    await expect(importBackup(photos, join(other, "home"))).rejects.toThrow(ImportError);
  });
});
