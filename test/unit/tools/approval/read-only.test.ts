/**
 * The read-only list the checkpoint hook trusts: readers pass, anything that can write, run other
 * code or hide what it runs does not. Each mutating row is a spelling an agent could use to change
 * files without a checkpoint being taken first.
 */
import { describe, expect, it } from "vitest";
import { isReadOnlyCommand } from "../../../../src/tools/approval/read-only.js";

describe("isReadOnlyCommand", () => {
  it.each([
    "ls",
    "ls -la src",
    "cat README.md",
    "cat 'a file with spaces.txt'",
    "head -n 20 x.ts | grep foo | wc -l",
    "cd src && ls",
    "grep -rn TODO . 2>/dev/null",
    "ls > /dev/null 2>&1",
    "find . -name '*.ts' -type f",
    "git status",
    "git --no-pager log --oneline -5",
    "git diff HEAD~1",
    "echo $(pwd)",
    "wc -l < input.txt",
    "X=1 ls",
    "for f in a b; do cat $f; done",
    "test -f x && echo yes",
    "/usr/bin/cat x",
    "",
    "sort data.txt | uniq -c",
    "jq .name package.json",
  ])("read-only: %s", (command) => {
    expect(isReadOnlyCommand(command)).toBe(true);
  });

  it.each([
    "rm x",
    "rm -rf build",
    "echo hi > x.txt",
    "echo hi >> x.txt",
    "cat a | tee b",
    "ls; rm x",
    "ls && mv a b",
    "cat $(rm x)",
    "echo `touch y`",
    "ls <(rm z)",
    "diff a >(tee out)",
    "find . -delete",
    "find . -name x -exec rm {} ;",
    "sort -o out.txt in.txt",
    "sort --output=out.txt in.txt",
    "sort -T /tmp x --compress-program=sh",
    "rg --pre ./evil pattern",
    "uniq in.txt out.txt",
    "git checkout -- .",
    "git -c core.pager=rm log",
    "git diff --output=patch.txt",
    "git commit -m x",
    "env rm x",
    "PATH=/tmp/evil:$PATH ls",
    "$CMD x",
    "eval ls",
    "bash -c ls",
    "sh script.sh",
    "./ls",
    "/tmp/cat x",
    "f() { rm x; }; f",
    "sed -i s/a/b/ x",
    "awk '{print > \"out\"}' x",
    "python3 -c 'print(1)'",
    "touch x",
    "mkdir d",
    "cp a b",
    "xargs rm < list",
    "sudo ls",
    "date -s 2020-01-01",
    "find . -name $X",
    "find * -name x",
    "echo $((x=$(rm y)))",
    "cat x 1>out",
    "ls &> log.txt",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not JS
    "echo ${x:-$(rm y)}",
    "tree -o out.txt",
    "file -C -m magic",
  ])("mutating: %s", (command) => {
    expect(isReadOnlyCommand(command)).toBe(false);
  });
});
