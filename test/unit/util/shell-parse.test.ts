import { describe, expect, it } from "vitest";
import { parseShell } from "../../../src/util/shell-parse.js";

const words = (src: string) => parseShell(src).map((p) => p.map((c) => c.words.map((w) => w.text)));

describe("parseShell", () => {
  it("splits lists and pipelines", () => {
    expect(words("a b && c | d; e & f || g\nh")).toEqual([
      [["a", "b"]],
      [["c"], ["d"]],
      [["e"]],
      [["f"]],
      [["g"]],
      [["h"]],
    ]);
  });

  it("resolves quotes and escapes", () => {
    expect(words(`r''m -rf "a b" 'c d' e\\ f $'x\\ty'`)).toEqual([
      [["rm", "-rf", "a b", "c d", "e f", "x\ty"]],
    ]);
  });

  it("collects command and process substitutions", () => {
    const [pipeline] = parseShell('echo "$(curl -s x)" `id` <(wget y)');
    expect(pipeline?.[0]?.words.flatMap((w) => w.subs)).toEqual(["curl -s x", "id", "wget y"]);
  });

  it("separates redirections, with fd and heredoc bodies", () => {
    const [pipeline] = parseShell("cat <<'EOF' > out.txt 2>&1\nline one\nEOF\n");
    const cmd = pipeline?.[0];
    expect(cmd?.words.map((w) => w.text)).toEqual(["cat"]);
    expect(cmd?.redirects.map((r) => [r.op, r.fd, r.target.text, r.heredoc])).toEqual([
      ["<<", undefined, "EOF", "line one"],
      [">", undefined, "out.txt", undefined],
      [">&", "2", "1", undefined],
    ]);
  });

  it("skips keywords, grouping and comments", () => {
    expect(words("if true; then { rm x; }; fi # rm -rf /")).toEqual([[["true"]], [["rm", "x"]]]);
  });

  it("does not throw or hang on unbalanced input", () => {
    for (const src of ["'open", '"open', "$(open", "`open", "a <", "((", "))", "<<"]) {
      expect(() => parseShell(src)).not.toThrow();
    }
  });
});
