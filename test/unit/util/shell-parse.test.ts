// biome-ignore-all lint/suspicious/noTemplateCurlyInString: shell commands, where ${...} is shell syntax
import { describe, expect, it } from "vitest";
import { parseScript, parseShell } from "../../../src/util/shell-parse.js";

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

describe("parseScript", () => {
  it("keeps the parts of a word apart", () => {
    const [p] = parseScript(`a"$b"'c'\${d:-e}$(f)$((1+2))`).pipelines;
    const kinds = p?.commands[0]?.words[0]?.parts.map((x) => x.kind);
    expect(kinds).toEqual(["lit", "param", "lit", "param", "cmdsub", "arith"]);
  });

  it("collects substitutions inside ${...} and $((...)) and unquoted heredocs", () => {
    const [p] = parseScript("echo ${x:-$(one)} $(( $(two) )) <<EOF\n$(three)\nEOF").pipelines;
    const cmd = p?.commands[0];
    expect(cmd?.words.flatMap((w) => w.subs)).toEqual(["one", "two"]);
    expect(cmd?.redirects[0]?.heredocWord?.subs).toEqual(["three"]);
  });

  it("drops NUL bytes as bash does", () => {
    expect(parseShell("r\u0000m -rf x")[0]?.[0]?.words[0]?.text).toBe("rm");
  });

  it("records function definitions, nesting and connectors", () => {
    const s = parseScript("f() { a | b & }; if x; then y; fi && z");
    expect(s.functions).toEqual(["f"]);
    const [body, cond, then, after] = s.pipelines;
    expect(body).toMatchObject({ functions: ["f"], background: true, nested: true });
    expect(cond?.nested).toBe(true);
    expect(then?.nested).toBe(true);
    expect(after).toMatchObject({ nested: false, connector: "&&" });
  });

  it("parses case patterns and for headers as keyword words, not commands", () => {
    const cmds = parseScript("for f in a b; do rm $f; done; case $x in a|b) ls;; esac").pipelines.flatMap(
      (p) => p.commands,
    );
    expect(cmds.map((c) => [c.keyword ?? "", c.words.map((w) => w.text).join(" ")])).toEqual([
      ["for", "f a b"],
      ["", "rm $f"],
      ["case", "$x"],
      ["case", "a b"],
      ["", "ls"],
    ]);
  });
});
