import { describe, expect, it } from "vitest";
import { applyHunks, parseV4A } from "../../../../src/tools/file/v4a.js";

describe("parseV4A", () => {
  it("parses add, update (with move and anchors) and delete sections", () => {
    const ops = parseV4A(
      [
        "*** Begin Patch",
        "*** Add File: new.txt",
        "+hello",
        "+",
        "*** Update File: src/a.ts",
        "*** Move to: src/b.ts",
        "@@ class A",
        "@@ run() {",
        " keep",
        "-old",
        "+new",
        "",
        "*** Delete File: gone.txt",
        "*** End Patch",
      ].join("\n"),
    );
    expect(ops).toEqual([
      { kind: "add", path: "new.txt", content: "hello\n\n" },
      {
        kind: "update",
        path: "src/a.ts",
        moveTo: "src/b.ts",
        hunks: [
          {
            anchors: ["class A", "run() {"],
            oldLines: ["keep", "old", ""],
            newLines: ["keep", "new", ""],
            atEnd: false,
            patchLine: 7,
          },
        ],
      },
      { kind: "delete", path: "gone.txt" },
    ]);
  });

  it.each([
    ["*** Begin Patch\n*** End Patch", /no \*\*\* Add File/],
    ["*** Begin Patch\n*** Add File: x\nno plus\n*** End Patch", /line 3.*must start with "\+"/],
    ["*** Begin Patch\n*** Frobnicate File: x\n*** End Patch", /line 2.*unknown/],
    ["*** Begin Patch\n*** Update File: x\n*** End Patch", /has no changes/],
    ["*** Begin Patch\n*** Update File: x\n@@\n?weird\n*** End Patch", /line 4/],
    ["*** Begin Patch\n*** Update File: \n+x\n*** End Patch", /names no file/],
  ])("rejects malformed input %#", (patch, message) => {
    expect(() => parseV4A(patch)).toThrow(message);
  });
});

describe("applyHunks", () => {
  const hunks = (patch: string) => {
    const [op] = parseV4A(`*** Begin Patch\n*** Update File: f\n${patch}\n*** End Patch`);
    if (op?.kind !== "update") throw new Error("expected update");
    return op.hunks;
  };

  it("applies several hunks in order and keeps the final newline", () => {
    const file = "a\nb\nc\nd\ne\n";
    expect(applyHunks(file, hunks("@@\n a\n-b\n+B\n@@\n d\n-e\n+E"))).toBe("a\nB\nc\nd\nE\n");
  });

  it("uses @@ anchors to pick the right occurrence", () => {
    const file = "function one() {\n  return 1;\n}\nfunction two() {\n  return 1;\n}\n";
    expect(applyHunks(file, hunks("@@ function two() {\n-  return 1;\n+  return 2;"))).toBe(
      "function one() {\n  return 1;\n}\nfunction two() {\n  return 2;\n}\n",
    );
  });

  it("tolerates indentation drift and re-indents added lines", () => {
    const file = "def f():\n    x = 1\n    return x\n";
    expect(applyHunks(file, hunks(" x = 1\n-return x\n+y = x\n+return y"))).toBe(
      "def f():\n    x = 1\n    y = x\n    return y\n",
    );
  });

  it("keeps CRLF files CRLF", () => {
    expect(applyHunks("a\r\nb\r\n", hunks(" a\n-b\n+c"))).toBe("a\r\nc\r\n");
  });

  it("appends with a context-free hunk and honours *** End of File", () => {
    expect(applyHunks("a\n", hunks("+b"))).toBe("a\nb\n");
    expect(applyHunks("x\ny\nx\n", hunks(" x\n+z\n*** End of File"))).toBe("x\ny\nx\nz\n");
  });

  it("names the hunk it cannot place", () => {
    expect(() => applyHunks("a\nb\n", hunks(" a\n-b\n+c\n@@\n-missing\n+m"))).toThrow(
      /hunk 2 .*cannot find these lines/s,
    );
    expect(() => applyHunks("a\n", hunks("@@ nowhere\n-a\n+b"))).toThrow(/anchor line "nowhere"/);
  });
});
