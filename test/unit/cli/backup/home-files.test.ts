import { describe, expect, it } from "vitest";
import {
  archivePrefix,
  excludedDir,
  excludedFile,
  judgeMember,
} from "../../../../src/cli/backup/home-files.js";

describe("judgeMember", () => {
  it.each([
    "../escape",
    "a/../../escape",
    "/etc/passwd",
    "C:/Windows/x",
    "c:evil",
    "memories\\..\\..\\x",
    "a/\0b",
    "skills/../..",
  ])("blocks %j", (name) => {
    expect(judgeMember(name).kind).toBe("blocked");
  });

  it.each([
    "gateway.pid",
    "profiles/w/gateway_state.json",
    "state.db-wal",
    "profiles/w/state.db-shm",
    "processes.json",
  ])("keeps this machine's runtime file %j", (name) => expect(judgeMember(name).kind).toBe("skip-runtime"));

  it.each([
    ["config.yaml", ["config.yaml"]],
    ["./memories/MEMORY.md", ["memories", "MEMORY.md"]],
    ["skills/a..b/SKILL.md", ["skills", "a..b", "SKILL.md"]],
    ["profiles/work/state.db", ["profiles", "work", "state.db"]],
  ])("writes %j", (name, parts) => {
    expect(judgeMember(name)).toEqual({ kind: "write", parts });
  });
});

describe("what a backup leaves out", () => {
  it.each([
    [["checkpoints"], true],
    [["profiles", "w", "node_modules"], true],
    [["hermes-agent"], true],
    [["skills", "x", "hermes-agent"], false],
    [["cache", "models"], true],
    [["cache", "images"], false],
    [["profiles", "w", "cache", "videos"], false],
    [["profiles", "w", "models"], true],
    [["skills", "x", "models"], false],
    [["backups"], true],
    [["profiles", "w", "state-snapshots"], true],
    [["skills", "devops", "backups"], false],
    [["profiles", "checkpoints"], false],
    [["skills", "x", "checkpoints"], false],
    [["profiles", "w", "skills", "x", "state-snapshots"], false],
  ])("directory %j excluded: %s", (parts, excluded) => {
    expect(excludedDir(parts)).toBe(excluded);
  });

  it.each([
    [["state.db-wal"], true],
    [["kanban.db-journal"], true],
    [["gateway.pid"], true],
    [["state.db.corrupt-20260101"], true],
    [["state.db"], false],
    [["notes.wal"], false],
  ])("file %j excluded: %s", (parts, excluded) => {
    expect(excludedFile(parts)).toBe(excluded);
  });

  it("detects a home wrapped in one directory, and only then", () => {
    expect(archivePrefix([".hermes/config.yaml", ".hermes/memories/MEMORY.md"])).toBe(".hermes/");
    expect(archivePrefix(["config.yaml", "skills/x/SKILL.md"])).toBe("");
    expect(archivePrefix(["skills/x/SKILL.md", "skills/y/SKILL.md"])).toBe("");
  });
});
