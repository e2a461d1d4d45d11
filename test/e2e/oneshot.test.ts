import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { disconnectMidStream, httpError, rawText, reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

type ChatBody = {
  messages: Array<{ role: string; content: string | null; tool_call_id?: string }>;
  tools?: unknown[];
};
const toolResults = (request: number): string[] =>
  (llm.chatRequests[request]!.body as ChatBody).messages
    .filter((m) => m.role === "tool")
    .map((m) => String(m.content));

describe("hermes one-shot against a scripted model", () => {
  it("writes a file, reads it back, runs terminal with cd persisting, and -z prints only the answer", async () => {
    const { home, cwd } = tempHome();
    writeFileSync(join(home, "config.yaml"), fakeProviderConfig(llm.url));
    llm.enqueue(
      reply().toolCall("write_file", { path: "notes/hello.txt", content: "hello from hermes\n" }),
      reply().toolCall("read_file", { path: "notes/hello.txt" }),
      reply().toolCall("terminal", { command: "cd notes && export GREETING=hi" }),
      reply().toolCall("terminal", { command: "pwd && cat hello.txt && echo $GREETING" }),
      reply().text("The file says hello from hermes."),
    );
    const result = await runHermes(["-z", "make a note and check it"], { home, cwd });
    expect(result.stderr).toBe("");
    expect(result.stdout).toBe("The file says hello from hermes.\n");
    expect(result.code).toBe(0);
    expect(readFileSync(join(cwd, "notes/hello.txt"), "utf8")).toBe("hello from hermes\n");
    expect(toolResults(2)[1]).toContain("hello from hermes");
    const shell = toolResults(4)[3] ?? "";
    expect(shell).toContain(join(cwd, "notes"));
    expect(shell).toContain("hi");
    // Every request carries the same system prompt bytes and the tool list.
    const systems = llm.chatRequests.map((r) => (r.body as ChatBody).messages[0]?.content);
    expect(new Set(systems).size).toBe(1);
    expect((llm.chatRequests[0]!.body as ChatBody).tools!.length).toBeGreaterThan(4);
    // The openai SDK's own User-Agent, as its unminified class name spells it, from the bundle too.
    for (const request of llm.chatRequests)
      expect(request.headers["user-agent"]).toMatch(/^OpenAI\/JS \d+\.\d+/);
  });

  it("chat -q streams the answer on stdout and tool progress on stderr", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(reply().toolCall("terminal", { command: "echo hi" }), reply().text("All done."));
    const result = await runHermes(["chat", "-q", "say hi"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("All done.\n");
    expect(result.stderr).toMatch(/terminal echo hi \d+\.\ds/);
  });

  it("executes tool calls the model wrote as <tool_call> text", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(
      rawText(
        '<tool_call>\n{"name": "write_file", "arguments": {"path": "t.txt", "content": "via text"}}\n</tool_call>',
      ),
      reply().text("written"),
    );
    const result = await runHermes(["-z", "write it"], { home, cwd });
    expect(result.stdout).toBe("written\n");
    expect(readFileSync(join(cwd, "t.txt"), "utf8")).toBe("via text");
  });

  it("returns malformed arguments, unknown tools and failing tools to the model as errors", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(
      reply()
        // A trailing comma is repaired harmlessly and the call runs...
        .toolCall("read_file", '{"path": "missing.txt",}')
        .toolCall("summon_demon", {})
        .toolCall("read_file", { path: "." })
        // ...but arguments that stop before their closing brace were cut off and are not run.
        .toolCall("read_file", '{"path": "missing.txt"'),
      reply().text("handled"),
    );
    const result = await runHermes(["-z", "try things"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("handled\n");
    const [missing, unknown, directory, cut] = toolResults(1);
    expect(missing).toMatch(/not found/i);
    expect(unknown).toContain("Unknown tool");
    expect(directory).toMatch(/directory/i);
    expect(cut).toMatch(/Not run: the arguments of this read_file call end in the middle of a value/);
  });

  it("denies a dangerous command in a non-interactive run and leaves the files alone", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    writeFileSync(join(cwd, "precious.txt"), "keep me");
    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${cwd}` }),
      reply().text("I was not allowed."),
    );
    const result = await runHermes(["chat", "-q", "clean up"], { home, cwd });
    expect(result.code).toBe(0);
    expect(existsSync(join(cwd, "precious.txt"))).toBe(true);
    expect(toolResults(1)[0]).toMatch(/denied/i);
  });

  it("runs a dangerous command with --yolo but never a hardline one", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(
      reply().toolCall("terminal", { command: "mkdir -p junk/a && rm -rf junk && echo removed" }),
      reply().toolCall("terminal", { command: "rm -rf /" }),
      reply().text("ok"),
    );
    const result = await runHermes(["-z", "clean", "--yolo"], { home, cwd });
    expect(result.code).toBe(0);
    expect(toolResults(1)[0]).toContain("removed");
    expect(toolResults(2)[1]).toMatch(/blocked|never allowed/i);
  });

  it("reports a provider 500 clearly and exits 1", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(httpError(500, { error: { message: "upstream exploded" } }));
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("HTTP 500");
    expect(result.stderr).toContain("upstream exploded");
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("retries a 429 with Retry-After and a dropped stream, then answers", async () => {
    const { home, cwd } = tempHome(
      fakeProviderConfig(llm.url).replace("api_max_retries: 0", "api_max_retries: 3"),
    );
    // The dropped stream first: its backoff is the first one (1–2 s, so 1.0 to 2.0 as printed); the
    // 429's Retry-After is 0.
    llm.enqueue(
      disconnectMidStream(2),
      httpError(429, { error: { message: "slow down" } }, { "retry-after": "0" }),
      reply().text("recovered"),
    );
    const result = await runHermes(["chat", "-q", "hi"], { home, cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("recovered");
    expect(result.stderr).toMatch(
      /the connection to 127\.0\.0\.1:\d+ dropped; retrying in (1\.\d|2\.0) s \(attempt 2 of 2\)/,
    );
    expect(result.stderr).toMatch(
      /rate limited by 127\.0\.0\.1:\d+ \(429\): slow down; retrying in 0\.0 s \(attempt 3 of 4\)/,
    );
  });

  it("reports a dropped stream clearly when retries are off", async () => {
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    llm.enqueue(disconnectMidStream(2));
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/error: Provider/);
  });
});

describe("hermes configuration and usage errors", () => {
  it("explains how to set a provider when none is configured", async () => {
    const { home, cwd } = tempHome();
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr.trim().split("\n")).toHaveLength(2);
  });

  it("names file, line and key for broken config.yaml and changes nothing", async () => {
    const broken = "model:\n  default: x\nagent:\n  max_turns: ninety\n";
    const { home, cwd } = tempHome(broken);
    const result = await runHermes(["-z", "hi"], { home, cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("config.yaml");
    expect(result.stderr).toContain("line 4");
    expect(result.stderr).toContain("agent.max_turns");
    expect(readFileSync(join(home, "config.yaml"), "utf8")).toBe(broken);

    const { home: home2 } = tempHome("model: [unclosed\n");
    const syntax = await runHermes(["-z", "hi"], { home: home2, cwd });
    expect(syntax.code).toBe(2);
    expect(syntax.stderr).toMatch(/config\.yaml line \d+: invalid YAML/);
  });

  it("prints the version, help, tools and toolsets", async () => {
    const { home, cwd } = tempHome();
    const version = await runHermes(["--version"], { home, cwd });
    expect(version.stdout).toMatch(/^hermes \d+\.\d+\.\d+\n$/);
    const help = await runHermes(["--help"], { home, cwd });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("--oneshot");
    const tools = await runHermes(["--list-tools"], { home, cwd });
    expect(tools.stdout).toMatch(/^read_file\s+file/m);
    expect(tools.stdout).toMatch(/^terminal\s+terminal/m);
    const toolsets = await runHermes(["--list-toolsets"], { home, cwd });
    expect(toolsets.stdout).toMatch(/^hermes-cli\s/m);
    const bad = await runHermes(["--max-turns", "zero", "-z", "x"], { home, cwd });
    expect(bad.code).toBe(2);
  });
});
