/**
 * Keeping a received file (media-files.ts `saveInboundFile`, used by the SMS, WhatsApp Cloud,
 * Matrix and Mattermost adapters): the media folder is created when missing, the file is the
 * owner's alone, and two files saved at once never share a name.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { saveInboundFile } from "../../../src/gateway/platforms/media-files.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("saveInboundFile", () => {
  it("creates the media folder and keeps the bytes owner-only under a fresh prefixed name", async () => {
    const root = mkdtempSync(join(tmpdir(), "hermes-media-"));
    dirs.push(root);
    const mediaDir = join(root, "cache", "media");
    const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
    const [a, b] = await Promise.all([
      saveInboundFile(mediaDir, "sms-photo", bytes, ".png"),
      saveInboundFile(mediaDir, "sms-photo", bytes, ".png"),
    ]);
    expect(a).not.toBe(b);
    for (const path of [a, b]) {
      expect(dirname(path)).toBe(mediaDir);
      expect(basename(path)).toMatch(/^sms-photo-[0-9a-z]+-[0-9a-f]{8}\.png$/);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect([...readFileSync(path)]).toEqual([...bytes]);
    }
  });
});
