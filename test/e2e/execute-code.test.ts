/**
 * Programmatic tool calling through the built CLI: the model sends one `execute_code` call whose
 * script calls tools over the sandbox socket; only the script's printed output reaches the model,
 * and the nested calls are shown on the terminal but never stored as conversation messages.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/state/sqlite-store.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

const SCRIPT = [
  "import json, re",
  "from hermes_tools import search_files, read_file, write_file, terminal",
  "found = search_files('*.txt', target='files')",
  "names = sorted(re.findall(r'[abc]\\.txt', json.dumps(found)))",
  "total = 0",
  "for name in sorted(set(names)):",
  "    text = read_file(name)",
  "    first = str(text).strip().splitlines()[0]",
  "    total += int(re.split(r'[|\\t]', first)[-1].strip())",
  "write_file('sum.txt', str(total))",
  "echoed = terminal('cat sum.txt')",
  "print(f'files={len(set(names))} sum={total} shell={json.dumps(echoed)[:80]}')",
].join("\n");

/** A process that exists and is not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

describe("execute_code from the CLI", () => {
  it("runs a script that calls tools; the model sees only its output", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    for (const [name, n] of [
      ["a.txt", 1],
      ["b.txt", 20],
      ["c.txt", 300],
    ] as const)
      writeFileSync(join(h.cwd, name), `${n}\n`);
    llm.enqueue(
      reply().toolCall("execute_code", { code: SCRIPT }, "call_exec_1"),
      reply().text("The sum is 321."),
    );
    const result = await runHermes(["-q", "Add up the numbers in a, b and c", "--toolsets", "hermes-cli"], {
      ...h,
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("The sum is 321.");

    // The second request carries the script's stdout as the one tool result.
    const second = llm.chatRequests[1]?.body as { messages: Array<{ role: string; content: string }> };
    const tools = second.messages.filter((m) => m.role === "tool");
    expect(tools).toHaveLength(1);
    const outcome = JSON.parse(tools[0]?.content ?? "{}") as Record<string, unknown>;
    expect(outcome["status"], JSON.stringify(outcome)).toBe("success");
    expect(String(outcome["output"])).toMatch(/^files=3 sum=321 shell=.*321/);
    // search_files, three read_file, write_file, terminal.
    expect(outcome["tool_calls_made"]).toBe(6);
    // The terminal shows each inner call under the execute_code call.
    const inner = result.stderr.split("\n").filter((l) => l.includes("↳"));
    expect(inner.filter((l) => l.includes("read_file"))).toHaveLength(3);
    expect(inner.some((l) => l.includes("search_files"))).toBe(true);
    expect(inner.some((l) => l.includes("terminal"))).toBe(true);
    // The script's work landed on disk.
    expect(readFileSync(join(h.cwd, "sum.txt"), "utf8")).toBe("321");

    const store = openSqliteStore(join(h.home, "state.db"), { readonly: true });
    try {
      const [session] = store.listSessions();
      const roles = store.conversation(session?.id ?? "").map((m) => m.role);
      expect(roles).toEqual(["user", "assistant", "tool", "assistant"]);
    } finally {
      store.close();
    }
  }, 70_000);

  it("cuts a 1 MB print with a notice and kills a script that never ends, with its children", async () => {
    const h = tempHome(fakeProviderConfig(llm.url, "code_execution:\n  timeout: 2\n"));
    const pidFile = join(h.cwd, "child.pid");
    const big = "print('x' * 1_000_000)";
    const forever = [
      "import subprocess, time",
      `p = subprocess.Popen(['sleep', '600'])`,
      `open(${JSON.stringify(pidFile)}, 'w').write(str(p.pid))`,
      "time.sleep(600)",
    ].join("\n");
    llm.enqueue(
      reply().toolCall("execute_code", { code: big }, "call_big"),
      reply().toolCall("execute_code", { code: forever }, "call_forever"),
      reply().text("done"),
    );
    const result = await runHermes(["-q", "go"], { ...h, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    const last = llm.chatRequests[2]?.body as { messages: Array<{ role: string; content: string }> };
    const [bigResult, foreverResult] = last.messages
      .filter((m) => m.role === "tool")
      .map((m) => JSON.parse(m.content) as Record<string, unknown>);
    expect(bigResult?.["status"]).toBe("success");
    expect(String(bigResult?.["output"]).length).toBeLessThan(60_000);
    expect(String(bigResult?.["output"])).toMatch(/truncated|cut|omitted/i);
    expect(foreverResult?.["status"]).toBe("timeout");
    // The grandchild `sleep` died with the script.
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(alive(pid)).toBe(false);
  }, 70_000);
  it("never runs a script that deletes the home (even with --yolo) or edits config.yaml without approval", async () => {
    const h = tempHome(fakeProviderConfig(llm.url));
    const userHome = join(dirname(h.home), "user");
    mkdirSync(userHome);
    writeFileSync(join(userHome, "keep.txt"), "precious");
    const configBefore = readFileSync(join(h.home, "config.yaml"), "utf8");
    const wipe = "import shutil, os\nshutil.rmtree(os.path.expanduser('~'))\nprint('wiped')";
    const edit = `import os\nwith open(os.path.join(${JSON.stringify(h.home)}, 'config.yaml'), 'a') as f:\n    f.write('command_allowlist: [rm]\\n')`;
    const syscall = "import os as o\no.system('rm -rf ' + '~')";
    llm.enqueue(
      reply().toolCall("execute_code", { code: wipe }, "call_wipe"),
      reply().toolCall("execute_code", { code: syscall }, "call_sys"),
      reply().text("yolo done"),
      reply().toolCall("execute_code", { code: edit }, "call_edit"),
      reply().text("plain done"),
    );
    const env = { HOME: userHome };
    const yolo = await runHermes(["-q", "clean up", "--yolo"], { ...h, env, timeoutMs: 60_000 });
    expect(yolo.code, yolo.stderr).toBe(0);
    const plain = await runHermes(["-q", "configure yourself"], { ...h, env, timeoutMs: 60_000 });
    expect(plain.code, plain.stderr).toBe(0);

    const results = [llm.chatRequests[2], llm.chatRequests[4]].flatMap((r) =>
      (
        (r?.body ?? { messages: [] }) as { messages: Array<{ role: string; content: string }> }
      ).messages.filter((m) => m.role === "tool"),
    );
    expect(results.map((m) => m.content)).toEqual([
      expect.stringMatching(/Blocked: .*recursively deletes/),
      expect.stringMatching(/Blocked/),
      expect.stringMatching(/Denied: .*config\.yaml.*write_file/),
    ]);
    expect(readFileSync(join(userHome, "keep.txt"), "utf8")).toBe("precious");
    expect(existsSync(h.home)).toBe(true);
    expect(readFileSync(join(h.home, "config.yaml"), "utf8")).toBe(configBefore);
  }, 130_000);
});
