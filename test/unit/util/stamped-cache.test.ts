import { mkdirSync, mkdtempSync, renameSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StampedFileCache } from "../../../src/util/stamped-cache.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "stamped-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Sets a file's mtime `secondsAgo` in the past, out of the racy window. */
function age(path: string, secondsAgo: number): void {
  const t = Date.now() / 1000 - secondsAgo;
  utimesSync(path, t, t);
}

function counting(): { cache: StampedFileCache<string>; parses: () => number } {
  let n = 0;
  const cache = new StampedFileCache((bytes) => {
    n++;
    return bytes.toString("utf8");
  });
  return { cache, parses: () => n };
}

describe("StampedFileCache", () => {
  it("parses a quiet file once while it stays the same", () => {
    const file = join(dir, "a.txt");
    writeFileSync(file, "one");
    age(file, 60);
    const { cache, parses } = counting();
    expect([cache.read(file), cache.read(file), cache.read(file)]).toEqual(["one", "one", "one"]);
    expect(parses()).toBe(1);
  });

  it("sees an edit of the same size in place, an atomic replace and a removal", () => {
    const file = join(dir, "a.txt");
    writeFileSync(file, "one");
    age(file, 60);
    const { cache } = counting();
    expect(cache.read(file)).toBe("one");
    writeFileSync(file, "two");
    age(file, 30);
    expect(cache.read(file)).toBe("two");
    const next = join(dir, "next.txt");
    writeFileSync(next, "six");
    age(next, 30);
    renameSync(next, file);
    expect(cache.read(file)).toBe("six");
    rmSync(file);
    expect(cache.read(file)).toBeUndefined();
  });

  it("re-reads a file written within the racy window (same size, same mtime tick)", () => {
    const file = join(dir, "a.txt");
    writeFileSync(file, "one");
    const { cache, parses } = counting();
    expect(cache.read(file)).toBe("one");
    // Rewritten with the same size and its mtime put back: only the racy rule can notice.
    const t = Date.now() / 1000;
    utimesSync(file, t, t);
    writeFileSync(file, "two");
    utimesSync(file, t, t);
    expect(cache.read(file)).toBe("two");
    expect(parses()).toBe(2);
  });

  it("gives undefined for a missing file or a missing parent, and throws for a directory read", () => {
    const { cache } = counting();
    expect(cache.read(join(dir, "nope"))).toBeUndefined();
    writeFileSync(join(dir, "file"), "x");
    expect(cache.read(join(dir, "file", "below"))).toBeUndefined();
    mkdirSync(join(dir, "sub"));
    expect(() => cache.read(join(dir, "sub"))).toThrow(/EISDIR/);
  });

  it("answers from the precheck without reading or caching", () => {
    const file = join(dir, "big.txt");
    writeFileSync(file, "x".repeat(100));
    age(file, 60);
    let parses = 0;
    const cache = new StampedFileCache<string>(
      () => {
        parses++;
        return "read";
      },
      { precheck: (st) => (st.size > 10n ? "too large" : undefined) },
    );
    expect(cache.read(file)).toBe("too large");
    writeFileSync(file, "small");
    age(file, 60);
    expect(cache.read(file)).toBe("read");
    expect(parses).toBe(1);
  });

  it("does not cache a parse that throws", () => {
    const file = join(dir, "bad.json");
    writeFileSync(file, "{");
    age(file, 60);
    let parses = 0;
    const cache = new StampedFileCache((bytes) => {
      parses++;
      return JSON.parse(bytes.toString("utf8")) as unknown;
    });
    expect(() => cache.read(file)).toThrow(SyntaxError);
    expect(() => cache.read(file)).toThrow(SyntaxError);
    expect(parses).toBe(2);
  });

  it("keeps at most `max` files", () => {
    let parses = 0;
    const cache = new StampedFileCache(
      (bytes) => {
        parses++;
        return bytes.toString("utf8");
      },
      { max: 2 },
    );
    const files = ["a", "b", "c"].map((name) => {
      const file = join(dir, name);
      writeFileSync(file, name);
      age(file, 60);
      return file;
    });
    for (const file of files) cache.read(file);
    cache.read(files[2] as string);
    cache.read(files[0] as string);
    expect(parses).toBe(4);
  });
});
