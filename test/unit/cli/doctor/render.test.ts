import { describe, expect, it } from "vitest";
import { nodeCheck } from "../../../../src/cli/doctor/checks-system.js";
import { renderDoctor, summary } from "../../../../src/cli/doctor/render.js";
import { runRepairs } from "../../../../src/cli/doctor/run.js";
import type { DoctorLine } from "../../../../src/cli/doctor/types.js";

const lines: DoctorLine[] = [
  { group: "Config", name: "config.yaml", status: "ok", detail: "valid" },
  {
    group: "Home",
    name: ".env permissions",
    status: "fail",
    detail: "mode 644",
    fix: "chmod 600 .env",
    repair: () => "done",
  },
  { group: "Home", name: "folders", status: "warn", detail: "missing: logs", fix: "mkdir" },
];

describe("renderDoctor", () => {
  it("groups lines under headings with ✓/⚠/✗, the fix under each problem, and a summary", () => {
    expect(renderDoctor(lines, { color: false })).toBe(
      [
        "Config",
        "  ✓ config.yaml: valid",
        "",
        "Home",
        "  ✗ .env permissions: mode 644",
        "      → chmod 600 .env",
        "  ⚠ folders: missing: logs",
        "      → mkdir",
        "",
        "1 problem, 1 warning. 1 can be repaired with: hermes doctor --fix",
        "",
      ].join("\n"),
    );
  });

  it("colours only when asked", () => {
    expect(renderDoctor(lines, { color: false })).not.toContain("\x1b[");
    expect(renderDoctor(lines, { color: true })).toContain("\x1b[31m✗");
  });

  it("says all passed when nothing is wrong", () => {
    expect(summary([lines[0] as DoctorLine])).toBe("All checks passed.");
  });
});

describe("runRepairs", () => {
  it("runs only the repairs of problems, and a failing repair is reported, not thrown", async () => {
    const ran: string[] = [];
    const outcomes = await runRepairs([
      {
        group: "g",
        name: "fine",
        status: "ok",
        detail: "",
        repair: () => {
          ran.push("fine");
          return "x";
        },
      },
      {
        group: "g",
        name: "a",
        status: "fail",
        detail: "",
        repair: () => {
          ran.push("a");
          return "fixed a";
        },
      },
      {
        group: "g",
        name: "b",
        status: "warn",
        detail: "",
        repair: () => {
          throw new Error("read-only file system");
        },
      },
    ]);
    expect(ran).toEqual(["a"]);
    expect(outcomes.map((o) => [o.line.name, o.ok, o.message])).toEqual([
      ["a", true, "fixed a"],
      ["b", false, "read-only file system"],
    ]);
  });
});

describe("nodeCheck", () => {
  it.each([
    ["20.0.0", "ok"],
    ["22.11.0", "ok"],
    ["18.19.1", "fail"],
    ["garbage", "fail"],
  ])("Node %s is %s", (version, status) => {
    expect(nodeCheck(version).status).toBe(status);
  });
});
