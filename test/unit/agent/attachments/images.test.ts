import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import {
  detectDroppedImage,
  loadImageAttachment,
  userContent,
} from "../../../../src/agent/attachments/images.js";
import { PNG_1X1 } from "../../../support/images.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hermes-images-"));
  mkdirSync(join(dir, "My Shots"));
  writeFileSync(join(dir, "shot.png"), PNG_1X1);
  writeFileSync(join(dir, "My Shots", "a b.png"), PNG_1X1);
  writeFileSync(join(dir, "fake.png"), "not an image at all\n");
  writeFileSync(join(dir, "notes.txt"), "text\n");
});

describe("loadImageAttachment", () => {
  it("reads an image as a data URL part by its bytes", async () => {
    const image = await loadImageAttachment("shot.png", { cwd: dir });
    expect(image.path).toBe(join(dir, "shot.png"));
    expect(image.part.image_url.url).toBe(`data:image/png;base64,${PNG_1X1.toString("base64")}`);
    expect(image.bytes).toBe(PNG_1X1.length);
    const viaHome = await loadImageAttachment("~/shot.png", { cwd: "/", home: dir });
    expect(viaHome.path).toBe(join(dir, "shot.png"));
  });

  it.each([
    ["missing.png", /No such file: .*missing\.png/],
    ["fake.png", /is a text file, not an image/],
    ["notes.txt", /is a text file, not an image/],
    [".", /is not a file/],
  ])("refuses %s with the reason", async (path, message) => {
    await expect(loadImageAttachment(path, { cwd: dir })).rejects.toThrow(message);
  });

  it("refuses an image over the limits when there is no ffmpeg to shrink it", async () => {
    await expect(
      loadImageAttachment("shot.png", { cwd: dir, limits: { maxBytes: 10, maxSide: 8000 } }),
    ).rejects.toThrow(/over what models accept .* ffmpeg is not installed/);
  });
});

describe("userContent", () => {
  it("is the text alone without images, and text then image parts with them", async () => {
    const image = await loadImageAttachment("shot.png", { cwd: dir });
    expect(userContent("hi", [])).toBe("hi");
    expect(userContent("what is this?", [image])).toEqual([
      { type: "text", text: "what is this?" },
      image.part,
    ]);
    expect(userContent("  ", [image])).toEqual([image.part]);
  });
});

describe("detectDroppedImage", () => {
  it.each([
    [() => `${dir}/shot.png`, () => join(dir, "shot.png"), ""],
    [() => `${dir}/shot.png what is in it?`, () => join(dir, "shot.png"), "what is in it?"],
    [() => `'${dir}/My Shots/a b.png' describe`, () => join(dir, "My Shots", "a b.png"), "describe"],
    [() => `${dir}/My\\ Shots/a\\ b.png describe`, () => join(dir, "My Shots", "a b.png"), "describe"],
    [() => `${dir}/My Shots/a b.png`, () => join(dir, "My Shots", "a b.png"), ""],
    [() => `file://${dir}/shot.png`, () => join(dir, "shot.png"), ""],
    [() => "./shot.png ok", () => join(dir, "shot.png"), "ok"],
  ])("recognises a dropped image path", async (text, path, remainder) => {
    expect(await detectDroppedImage(text(), dir)).toEqual({ path: path(), remainder });
  });

  it.each([
    "shot.png", // not written like a path: a word
    "/help",
    "/etc/hosts is empty?",
    "please look at ./shot.png",
    "./notes.txt",
    "./missing.png",
    "/dev/null.png",
  ])("leaves %j alone", async (text) => {
    expect(await detectDroppedImage(text, dir)).toBeNull();
  });
});
