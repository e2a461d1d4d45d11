import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gitInfo } from "../../../src/util/git-info.js";
import { newSessionId } from "../../../src/util/session-id.js";

function repo(head: string): string {
  const root = mkdtempSync(join(tmpdir(), "hermes-git-"));
  mkdirSync(join(root, ".git"));
  writeFileSync(join(root, ".git", "HEAD"), head);
  mkdirSync(join(root, "a", "b"), { recursive: true });
  return root;
}

describe("gitInfo", () => {
  it("finds the branch from a nested directory", () => {
    const root = repo("ref: refs/heads/feature/x\n");
    expect(gitInfo(join(root, "a", "b"))).toEqual({ root, branch: "feature/x" });
  });
  it("shows a detached HEAD as a short commit id", () => {
    const root = repo("0123456789abcdef0123456789abcdef01234567\n");
    expect(gitInfo(root)?.branch).toBe("01234567");
  });
  it("follows a worktree's gitdir file", () => {
    const main = repo("ref: refs/heads/main\n");
    const wt = mkdtempSync(join(tmpdir(), "hermes-wt-"));
    mkdirSync(join(main, ".git", "worktrees", "w"), { recursive: true });
    writeFileSync(join(main, ".git", "worktrees", "w", "HEAD"), "ref: refs/heads/side\n");
    writeFileSync(join(wt, ".git"), `gitdir: ${join(main, ".git", "worktrees", "w")}\n`);
    expect(gitInfo(wt)).toEqual({ root: wt, branch: "side" });
  });
  it("returns null outside a repository and tolerates an unreadable HEAD", () => {
    expect(gitInfo(mkdtempSync(join(tmpdir(), "hermes-nogit-")))).toBeNull();
    const root = mkdtempSync(join(tmpdir(), "hermes-git-"));
    mkdirSync(join(root, ".git"));
    expect(gitInfo(root)).toEqual({ root });
  });
});

describe("newSessionId", () => {
  it("uses local date and time plus six hex digits, like Python Hermes", () => {
    const id = newSessionId(new Date(2026, 0, 2, 3, 4, 5));
    expect(id).toMatch(/^20260102_030405_[0-9a-f]{6}$/);
    expect(newSessionId()).not.toBe(newSessionId());
  });
});
