/**
 * The copilot-acp transport against a fake Copilot CLI that speaks real ACP JSON-RPC on stdio
 * (test/support/fake-copilot-acp.mjs): answers stream, tool calls come back to Hermes, the agent's
 * own permission and file requests are refused, interrupts cancel then kill, a dead or silent agent
 * fails the call clearly and is started again, and the agent never sees Hermes's secrets.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { classifyApiError } from "../../../../src/ai/error-classifier.js";
import { COPILOT_ACP_DEFAULT_ARGS } from "../../../../src/ai/transports/acp-launch.js";
import { AcpAgentProcess } from "../../../../src/ai/transports/acp-process.js";
import { createAcpTransport } from "../../../../src/ai/transports/acp-provider.js";
import {
  type ChatRequest,
  type Message,
  ProviderError,
  type StreamEvent,
  type ToolSchema,
} from "../../../../src/ai/types.js";
import { isAlive } from "../../../../src/util/process-tree.js";
import { type FakeCopilot, fakeCopilot } from "../../../support/fake-copilot.js";

const TERMINAL: ToolSchema = {
  type: "function",
  function: {
    name: "terminal",
    description: "Run a shell command",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
};

const started: AcpAgentProcess[] = [];
afterEach(() => {
  for (const p of started.splice(0)) p.kill();
});

function setup(
  extraEnv: Record<string, string> = {},
  opts: { startTimeoutMs?: number; command?: string; stallTimeoutMs?: number } = {},
) {
  const fake = fakeCopilot();
  const env = {
    PATH: fake.path,
    HOME: process.env["HOME"] ?? "/tmp",
    FAKE_ACP_LOG: fake.logFile,
    FAKE_ACP_ENV_FILE: fake.envFile,
    ...extraEnv,
  };
  const refused: string[] = [];
  const proc = new AcpAgentProcess({
    launch: { command: opts.command ?? fake.command, args: COPILOT_ACP_DEFAULT_ARGS },
    cwd: mkdtempSync(join(tmpdir(), "acp-cwd-")),
    env,
    startTimeoutMs: opts.startTimeoutMs ?? 20_000,
    onRefused: (what) => refused.push(what),
  });
  started.push(proc);
  const transport = createAcpTransport({
    launch: { command: fake.command, args: COPILOT_ACP_DEFAULT_ARGS },
    env,
    process: proc,
    cancelGraceMs: 300,
    stallTimeoutMs: opts.stallTimeoutMs ?? 20_000,
  });
  return { fake, transport, proc, refused };
}

function ask(text: string, extra: Partial<ChatRequest> = {}): ChatRequest {
  return { model: "copilot-acp", messages: [{ role: "user", content: text }], ...extra };
}

async function collect(stream: AsyncIterable<StreamEvent>, onEvent?: (e: StreamEvent) => void) {
  const events: StreamEvent[] = [];
  try {
    for await (const event of stream) {
      events.push(event);
      onEvent?.(event);
    }
    return { events, error: undefined as unknown };
  } catch (error) {
    return { events, error };
  }
}

const text = (events: StreamEvent[]) => events.map((e) => (e.type === "text_delta" ? e.text : "")).join("");
const finish = (events: StreamEvent[]) => {
  const last = events.at(-1);
  if (last?.type !== "finish") throw new Error(`no finish event: ${JSON.stringify(events)}`);
  return last;
};
const starts = (fake: FakeCopilot) => fake.events().filter((e) => e["event"] === "start");

describe("copilot-acp transport", () => {
  it("streams a text answer with its reasoning, and reuses one agent process for later calls", async () => {
    const { fake, transport } = setup();
    const first = await collect(transport.stream(ask("hello")));
    expect(first.error).toBeUndefined();
    expect(text(first.events)).toBe("Hello from fake copilot (model default-model).");
    expect(first.events.filter((e) => e.type === "text_delta").length).toBeGreaterThan(1);
    const done = finish(first.events);
    expect(done.reason).toBe("stop");
    expect(done.message).toMatchObject({
      role: "assistant",
      content: "Hello from fake copilot (model default-model).",
      reasoning: "thinking it over",
    });
    const second = await collect(transport.stream(ask("again")));
    expect(finish(second.events).message.content).toContain("Hello from fake copilot");
    expect(starts(fake)).toHaveLength(1);
    const methods = fake.events().map((e) => e["method"]);
    expect(methods.filter((m) => m === "initialize")).toHaveLength(1);
    expect(methods.filter((m) => m === "session/new")).toHaveLength(2);
    // Each call's session is closed after it: the long-lived agent does not pile them up.
    await waitFor(() => fake.events().filter((e) => e["method"] === "session/close").length === 2);
    expect(starts(fake)[0]?.["argv"]).toEqual(["--acp", "--stdio"]);
  });

  it("returns the agent's tool call to Hermes, never as text, and shows it the result next time", async () => {
    const { transport } = setup();
    const call = await collect(
      transport.stream(ask("SCENARIO:tool COMMAND<<ls -la>>", { tools: [TERMINAL] })),
    );
    expect(call.error).toBeUndefined();
    expect(text(call.events)).toBe("Running it now.");
    expect(text(call.events)).not.toContain("<tool");
    const done = finish(call.events);
    expect(done.reason).toBe("tool_calls");
    expect(done.message.content).toBe("Running it now.");
    const calls = done.message.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    expect(calls[0]?.function.name).toBe("terminal");
    expect(JSON.parse(calls[0]?.function.arguments ?? "")).toEqual({ command: "ls -la" });
    expect(call.events.filter((e) => e.type === "tool_call")).toHaveLength(1);

    const history: Message[] = [
      { role: "user", content: "SCENARIO:tool COMMAND<<ls -la>>" },
      done.message,
      { role: "tool", tool_call_id: calls[0]?.id ?? "", name: "terminal", content: '{"output":"total 0"}' },
    ];
    const next = await collect(
      transport.stream({ model: "copilot-acp", messages: history, tools: [TERMINAL] }),
    );
    expect(finish(next.events).message.content).toBe('The tool said: {"output":"total 0"}');
  });

  it("refuses the agent's own permission requests: a reject option when offered, else cancelled", async () => {
    const { transport, refused } = setup();
    const withReject = await collect(transport.stream(ask("SCENARIO:permission")));
    expect(text(withReject.events)).toBe(
      'permission outcome: {"outcome":{"outcome":"selected","optionId":"no"}}',
    );
    const allowOnly = await collect(transport.stream(ask("SCENARIO:permission-allow-only")));
    expect(text(allowOnly.events)).toBe('permission outcome: {"outcome":{"outcome":"cancelled"}}');
    expect(text(allowOnly.events)).not.toMatch(/"optionId":"(yes|always)"/);
    expect(refused).toEqual(["Run rm -rf ~/projects", "Run rm -rf ~/projects"]);
  });

  it("offers the agent no file-system methods: a write request is refused and nothing is written", async () => {
    const { transport } = setup();
    const target = join(mkdtempSync(join(tmpdir(), "acp-fs-")), "pwned.txt");
    const result = await collect(transport.stream(ask(`SCENARIO:fs PATH<<${target}>>`)));
    expect(text(result.events)).toMatch(/fs answer: \{"code":-32601/);
    expect(existsSync(target)).toBe(false);
  });

  it("an interrupt mid-answer sends session/cancel; an agent that stops in time is kept", async () => {
    const { fake, transport } = setup();
    const controller = new AbortController();
    const result = await collect(transport.stream(ask("SCENARIO:slow"), controller.signal), (e) => {
      if (e.type === "text_delta") controller.abort();
    });
    expect((result.error as Error).name).toBe("AbortError");
    expect(text(result.events)).toBe("Partial answer");
    await waitFor(() => fake.events().some((e) => e["method"] === "session/cancel"));
    await new Promise((r) => setTimeout(r, 500));
    const after = await collect(transport.stream(ask("hi")));
    expect(finish(after.events).message.content).toContain("Hello from fake copilot");
    expect(starts(fake)).toHaveLength(1);
  });

  it("an agent that ignores the cancel is killed with its process group, and the next call starts a new one", async () => {
    const { fake, transport } = setup();
    const controller = new AbortController();
    const result = await collect(transport.stream(ask("SCENARIO:deaf"), controller.signal), (e) => {
      if (e.type === "text_delta") controller.abort();
    });
    expect((result.error as Error).name).toBe("AbortError");
    const first = Number(starts(fake)[0]?.["pid"]);
    const grandchild = Number(fake.events().find((e) => e["event"] === "grandchild")?.["pid"]);
    await waitFor(() => !isAlive(first) && !isAlive(grandchild));
    const after = await collect(transport.stream(ask("hi")));
    expect(finish(after.events).message.content).toContain("Hello from fake copilot");
    expect(starts(fake)).toHaveLength(2);
  });

  it("an agent that dies mid-answer fails the call with what it printed, and is started again", async () => {
    const { fake, transport } = setup();
    const result = await collect(transport.stream(ask("SCENARIO:die")));
    expect(result.error).toBeInstanceOf(ProviderError);
    const error = result.error as ProviderError;
    expect(error.message).toMatch(/stopped in the middle of an answer: it exited with code 3/);
    expect(error.message).toContain("fatal: the fake agent crashed on purpose");
    expect(error.transport).toBe(true);
    expect(error.partial).toBe(true);
    expect(error.baseUrl).toBe("acp://copilot");
    // One crash may be a blip: the retry starts a new agent.
    expect(classifyApiError(error).retryable).toBe(true);
    const after = await collect(transport.stream(ask("hi")));
    expect(finish(after.events).message.content).toContain("Hello from fake copilot");
    expect(starts(fake)).toHaveLength(2);
  });

  it("an agent that goes silent mid-call is cut as stalled, killed, and started again next time", async () => {
    const { fake, transport } = setup({}, { stallTimeoutMs: 400 });
    const result = await collect(transport.stream(ask("SCENARIO:silent")));
    expect(result.error).toBeInstanceOf(ProviderError);
    expect((result.error as ProviderError).stalled).toBe(true);
    expect((result.error as Error).message).toMatch(/sent nothing for 0.4 s \(agent\.stream_stall_timeout\)/);
    const pid = Number(starts(fake)[0]?.["pid"]);
    await waitFor(() => !isAlive(pid));
    const after = await collect(transport.stream(ask("hi")));
    expect(finish(after.events).message.content).toContain("Hello from fake copilot");
    expect(starts(fake)).toHaveLength(2);
  });

  it("an agent that never answers initialize fails within the start timeout and is killed", async () => {
    const { fake, transport } = setup({ FAKE_ACP_NO_INIT: "1" }, { startTimeoutMs: 400 });
    const before = Date.now();
    const result = await collect(transport.stream(ask("hi")));
    expect(Date.now() - before).toBeLessThan(10_000);
    expect(result.error).toBeInstanceOf(ProviderError);
    expect((result.error as Error).message).toMatch(/did not answer initialize within 0.4 s/);
    expect((result.error as Error).message).toContain("HERMES_COPILOT_ACP_COMMAND");
    expect(classifyApiError(result.error).retryable).toBe(false);
    const pid = Number(starts(fake)[0]?.["pid"]);
    await waitFor(() => !isAlive(pid));
  });

  it("a program that cannot be started fails with its name", async () => {
    const { transport } = setup({}, { command: "/nonexistent/dir/copilot" });
    const result = await collect(transport.stream(ask("hi")));
    expect(result.error).toBeInstanceOf(ProviderError);
    expect((result.error as Error).message).toMatch(/\/nonexistent\/dir\/copilot.*ENOENT/);
    expect(classifyApiError(result.error).retryable).toBe(false);
  });

  it("selects the configured model in the session when the CLI offers it, and names what it offers when not", async () => {
    const { fake, transport } = setup({ FAKE_ACP_MODELS: "gpt-5,claude-sonnet-4.5" });
    const chosen = await collect(transport.stream({ ...ask("hi"), model: "claude-sonnet-4.5" }));
    expect(text(chosen.events)).toBe("Hello from fake copilot (model claude-sonnet-4.5).");
    const standard = await collect(transport.stream(ask("hi")));
    expect(text(standard.events)).toBe("Hello from fake copilot (model gpt-5).");
    const unknown = await collect(transport.stream({ ...ask("hi"), model: "gpt-9" }));
    expect((unknown.error as ProviderError).status).toBe(404);
    expect((unknown.error as Error).message).toMatch(
      /model gpt-9 not found: .*offers gpt-5, claude-sonnet-4\.5/,
    );
    const sets = fake.events().filter((e) => e["method"] === "session/set_config_option");
    expect(sets.map((e) => (e["params"] as { value: string }).value)).toEqual(["claude-sonnet-4.5"]);
  });

  it("a model named for a CLI with no model choice fails as not found, not as a dropped connection", async () => {
    const { fake, transport } = setup();
    const result = await collect(transport.stream({ ...ask("hi"), model: "gpt-5" }));
    expect((result.error as ProviderError).status).toBe(404);
    expect((result.error as Error).message).toMatch(
      /model gpt-5 not found: the Copilot CLI offers no model choice/,
    );
    expect(classifyApiError(result.error).reason).toBe("model_not_found");
    // A failed call leaves the agent running for the next one.
    await new Promise((r) => setTimeout(r, 500));
    const after = await collect(transport.stream(ask("hi")));
    expect(finish(after.events).message.content).toContain("Hello from fake copilot");
    expect(starts(fake)).toHaveLength(1);
    expect(fake.events().some((e) => e["method"] === "session/cancel")).toBe(false);
  });

  it("a CLI that is not logged in fails as an auth error that says how to log in, not retried", async () => {
    const { transport } = setup({ FAKE_ACP_LOGGED_OUT: "1" });
    const result = await collect(transport.stream(ask("hi")));
    expect((result.error as ProviderError).status).toBe(401);
    expect((result.error as Error).message).toMatch(
      /not logged in \(Authentication required\)\. Run copilot and log in/,
    );
    const classified = classifyApiError(result.error);
    expect(classified.retryable).toBe(false);
    expect(classified.reason).toMatch(/^auth/);
  });

  it("a consumer that stops reading early cancels the turn", async () => {
    const { fake, transport } = setup();
    for await (const event of transport.stream(ask("SCENARIO:slow"))) {
      if (event.type === "text_delta") break;
    }
    await waitFor(() => fake.events().some((e) => e["method"] === "session/cancel"));
  });

  it("starts the agent without Hermes's secrets, keeping the Copilot CLI's own token and home", async () => {
    const { fake, transport } = setup({
      OPENROUTER_API_KEY: "sk-or-v1-0123456789abcdef0123",
      OPENAI_API_KEY: "sk-proj-abcdefghijklmnop0123",
      ANTHROPIC_TOKEN: "sk-ant-oat01-abcdefghijklmnop",
      GH_TOKEN: "ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
      GITHUB_TOKEN: "ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
      TELEGRAM_BOT_TOKEN: "123456:ABCdefGHIjklMNOpqrSTUvwxYZ",
      MY_SERVICE_PASSWORD: "hunter2hunter2",
      AWS_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      COPILOT_GITHUB_TOKEN: "gho_cccccccccccccccccccccccccccccccccccc",
      XDG_CONFIG_HOME: "/tmp/xdg-config",
      BASH_FUNC_evil: "() { curl evil; }",
    });
    await collect(transport.stream(ask("hi")));
    const env = fake.childEnv();
    for (const secret of [
      "OPENROUTER_API_KEY",
      "OPENAI_API_KEY",
      "ANTHROPIC_TOKEN",
      "GH_TOKEN",
      "GITHUB_TOKEN",
      "TELEGRAM_BOT_TOKEN",
      "MY_SERVICE_PASSWORD",
      "AWS_SECRET_ACCESS_KEY",
      "BASH_FUNC_evil",
    ]) {
      expect(env[secret], secret).toBeUndefined();
    }
    expect(env["COPILOT_GITHUB_TOKEN"]).toBe("gho_cccccccccccccccccccccccccccccccccccc");
    expect(env["HOME"]).toBe(process.env["HOME"] ?? "/tmp");
    expect(env["XDG_CONFIG_HOME"]).toBe("/tmp/xdg-config");
    expect(env["PATH"]).toContain(fake.binDir);
  });

  it("sends an image to an agent that takes images, and only a note to one that does not", async () => {
    const image = {
      type: "image_url" as const,
      image_url: { url: "data:image/jpeg;base64,/9j/4AAQSkZJRg==" },
    };
    const request: ChatRequest = {
      model: "copilot-acp",
      messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, image] }],
    };
    for (const [flag, expected] of [
      ["1", ["image/jpeg"]],
      ["0", []],
    ] as const) {
      const { fake, transport } = setup({ FAKE_ACP_IMAGES: flag });
      const result = await collect(transport.stream(request));
      expect(result.error).toBeUndefined();
      expect(fake.events().find((e) => e["event"] === "prompt")?.["images"]).toEqual(expected);
    }
  });

  it("a line on stdout that is not JSON (a banner) does not break the connection", async () => {
    const { transport } = setup({ FAKE_ACP_BANNER: "1" });
    const result = await collect(transport.stream(ask("hello")));
    expect(result.error).toBeUndefined();
    expect(text(result.events)).toBe("Hello from fake copilot (model default-model).");
  });

  it("two calls at once on the one agent each get their own session's answer", async () => {
    const { fake, transport } = setup({ FAKE_ACP_MODELS: "gpt-5,claude-sonnet-4.5" });
    const [a, b] = await Promise.all([
      collect(transport.stream({ ...ask("hi"), model: "gpt-5" })),
      collect(
        transport.stream({
          ...ask("SCENARIO:tool COMMAND<<pwd>>", { tools: [TERMINAL] }),
          model: "claude-sonnet-4.5",
        }),
      ),
    ]);
    expect(text(a.events)).toBe("Hello from fake copilot (model gpt-5).");
    expect(finish(b.events).message.tool_calls?.[0]?.function.name).toBe("terminal");
    expect(text(b.events)).toBe("Running it now.");
    expect(starts(fake)).toHaveLength(1);
  });

  it("an interrupt before the call starts throws at once without starting the agent", async () => {
    const { fake, transport } = setup();
    const controller = new AbortController();
    controller.abort();
    const result = await collect(transport.stream(ask("hi"), controller.signal));
    expect((result.error as Error).name).toBe("AbortError");
    expect(starts(fake)).toHaveLength(0);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}
