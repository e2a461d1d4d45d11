/**
 * The agent cannot rewrite or delete the store its turns are rolled back from: the store is a
 * protected path for the file tools and the command analyser alike.
 */
import { describe, expect, it } from "vitest";
import { analyseCommand } from "../../../../src/tools/approval/analyse.js";
import { type GuardRoots, pathProtection } from "../../../../src/tools/approval/protected-paths.js";

const roots: GuardRoots = { homes: ["/home/u"], hermesHomes: ["/home/u/.hermes"] };

describe("the checkpoint store is protected", () => {
  it.each([
    "/home/u/.hermes/checkpoints/store/refs/hermes/0123456789abcdef",
    "/home/u/.hermes/checkpoints/store/objects/pack/x.pack",
    "/home/u/.hermes/profiles/work/checkpoints/store/HEAD",
  ])("%s is guarded", (path) => {
    expect(pathProtection(path, roots)?.reason).toMatch(/checkpoint store/);
  });

  it.each(["rm -rf ~/.hermes/checkpoints", "echo x > ~/.hermes/checkpoints/store/HEAD"])(
    "%s needs approval",
    (command) => {
      const verdict = analyseCommand(command, {
        cwd: "/home/u/work",
        roots,
        home: "/home/u",
        hermesHome: "/home/u/.hermes",
        realPath: (p) => p,
      });
      expect(verdict.dangerous).toBe(true);
    },
  );
});
