/**
 * Gateway hook folders: only enabled folders load, broken ones are reported, handlers match
 * events exactly or by `prefix:*`, and a throwing or hanging handler is reported without
 * stopping anyone. The bridge turns agent bus events into gateway events only for chats it owns.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HookBus } from "../../../../src/agent/hooks.js";
import { createCommandRegistry } from "../../../../src/commands/index.js";
import { GatewayHookBridge } from "../../../../src/gateway/hooks/bridge.js";
import { discoverGatewayHooks, enabledGatewayHooks } from "../../../../src/gateway/hooks/discover.js";
import { startGatewayHooks } from "../../../../src/gateway/hooks/index.js";
import { GatewayHooks, loadGatewayHooks, matches } from "../../../../src/gateway/hooks/registry.js";

function home(): string {
  return mkdtempSync(join(tmpdir(), "hermes-ghooks-"));
}

function hook(h: string, name: string, yaml: string, handler?: string, file = "handler.mjs"): void {
  const dir = join(h, "hooks", name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "HOOK.yaml"), yaml);
  if (handler !== undefined) writeFileSync(join(dir, file), handler);
}

const info = { session_id: "s1", task_id: "t", platform: "telegram", cwd: "/", model: "m" };

describe("gateway hook folders", () => {
  it("reads enabled names from a list or a comma string, lower-cased", () => {
    expect(enabledGatewayHooks({ gateway_hooks: { enabled: ["A", " b "] } })).toEqual(["a", "b"]);
    expect(enabledGatewayHooks({ gateway_hooks: { enabled: "x, Y" } })).toEqual(["x", "y"]);
    expect(enabledGatewayHooks({ hooks: { enabled: ["x"] } })).toEqual([]);
  });

  it("lists every folder but reports what is wrong with broken ones", () => {
    const h = home();
    hook(h, "ok", "events: [agent:start]\n", "export function handle() {}");
    hook(h, "noevents", "name: x\n", "export function handle() {}");
    hook(h, "badevent", "events: [agent:start, rm -rf]\n", "export function handle() {}");
    hook(h, "nohandler", "events: [agent:end]\n");
    hook(h, "badyaml", "events: [\n", "export function handle() {}");
    mkdirSync(join(h, "hooks", "not-a-hook"));
    const found = discoverGatewayHooks(h, { gateway_hooks: { enabled: ["ok"] } });
    expect(found.map((f) => f.name)).toEqual(["badevent", "badyaml", "noevents", "nohandler", "ok"]);
    const by = Object.fromEntries(found.map((f) => [f.name, f]));
    expect(by["ok"]).toMatchObject({ enabled: true, events: ["agent:start"] });
    expect(by["ok"]?.error).toBeUndefined();
    expect(by["badevent"]?.error).toContain("unknown event rm -rf");
    expect(by["nohandler"]?.error).toContain("no handler");
    expect(by["noevents"]?.error).toContain("no events");
    expect(by["badyaml"]?.error).toContain("not valid YAML");
    expect(by["badevent"]?.enabled).toBe(false);
  });

  it("loads only enabled folders; a broken enabled folder is reported, not loaded", () => {
    const h = home();
    hook(h, "on", "events: [agent:start]\n", "export function handle() {}");
    hook(h, "off", "events: [agent:start]\n", "throw new Error('loaded a disabled hook')");
    hook(h, "broken", "events: [agent:start]\n", "export const nothing = 1;");
    hook(h, "throwsatload", "events: [agent:start]\n", "throw new Error('boom at load');");
    const warnings: string[] = [];
    const { hooks } = loadGatewayHooks({
      home: h,
      config: { gateway_hooks: { enabled: ["on", "broken", "throwsatload"] } },
      warn: (m) => warnings.push(m),
    });
    expect(hooks.size).toBe(1);
    expect(warnings.join("\n")).toContain('hook "broken" is not loaded: ');
    expect(warnings.join("\n")).toContain("exports no handle(event, context) function");
    expect(warnings.join("\n")).toContain('hook "throwsatload" is not loaded: boom at load');
    expect(warnings.join("\n")).not.toContain("disabled hook");
  });

  it("HERMES_SAFE_MODE loads no hook, even an enabled one", () => {
    const h = home();
    hook(h, "on", "events: [gateway:startup]\n", "throw new Error('must not load');");
    const warnings: string[] = [];
    const handle = startGatewayHooks({
      home: h,
      config: { gateway_hooks: { enabled: ["on"] } },
      env: { HERMES_SAFE_MODE: "1" },
      bus: new HookBus(),
      warn: (m) => warnings.push(m),
    });
    handle.startup(["telegram"]);
    expect(warnings).toEqual([]);
  });
});

describe("firing gateway hooks", () => {
  it("matches exactly or by prefix wildcard, never by a longer prefix", () => {
    expect(matches(["command:*"], "command:model")).toBe(true);
    expect(matches(["command:*"], "commandx:model")).toBe(false);
    expect(matches(["command:*"], "command")).toBe(false);
    expect(matches(["agent:start"], "agent:start")).toBe(true);
    expect(matches(["agent:start"], "agent:step")).toBe(false);
  });

  it("a throwing, rejecting or hanging handler is reported and the others still run", async () => {
    const warnings: string[] = [];
    const hooks = new GatewayHooks((m) => warnings.push(m), 50);
    const seen: string[] = [];
    hooks.add("sync-throw", ["agent:start"], () => {
      throw new Error("sync boom");
    });
    hooks.add("reject", ["agent:start"], async () => Promise.reject(new Error("async boom")));
    hooks.add("hang", ["agent:start"], () => new Promise(() => undefined));
    hooks.add("ok", ["agent:*"], (event, ctx) => {
      seen.push(`${event}:${String(ctx["n"])}`);
      ctx["n"] = 99; // its own copy
    });
    hooks.add("ok2", ["agent:start"], (_e, ctx) => seen.push(`ok2:${String(ctx["n"])}`));
    const context = { n: 1 };
    hooks.emit("agent:start", context);
    expect(context.n).toBe(1);
    await hooks.settled();
    expect(seen).toEqual(["agent:start:1", "ok2:1"]);
    expect(warnings).toEqual([
      'hook "sync-throw" failed on agent:start: sync boom',
      'hook "reject" failed on agent:start: async boom',
      'hook "hang" did not finish agent:start within 0.05 s; the gateway went on without it',
    ]);
  });
});

describe("the bridge from the agent's hook bus", () => {
  it("fires agent events only for sessions a chat owns, following /new's new id", async () => {
    const hooks = new GatewayHooks(() => undefined);
    const seen: Array<[string, Record<string, unknown>]> = [];
    hooks.add("rec", ["agent:start", "agent:step", "agent:end", "session:end"], (e, c) => {
      seen.push([e, c]);
    });
    const bus = new HookBus();
    const bridge = new GatewayHookBridge(hooks);
    bridge.attach(bus);
    const chat = { id: "s1" };
    bridge.track("key1", { platform: "telegram", chatId: "c1", userId: "u1", chatType: "dm" }, chat);
    await bus.preLlmCall(
      { ...info, user_message: "hi", is_first_turn: true, history_length: 0 },
      new AbortController().signal,
    );
    // A subagent's session (no chat owns it) is not a gateway event.
    await bus.preLlmCall(
      {
        ...info,
        session_id: "child",
        user_message: "x",
        is_first_turn: true,
        history_length: 0,
      },
      new AbortController().signal,
    );
    // One loop iteration that asked for two tools: one agent:step naming both.
    await bus.notify("post_api_request", {
      ...info,
      api_call_count: 1,
      finish_reason: "tool_calls",
      tool_names: ["terminal", "read_file"],
    });
    // The iteration that gave the final answer is agent:end's, not a step.
    await bus.notify("post_api_request", {
      ...info,
      api_call_count: 2,
      finish_reason: "stop",
      tool_names: [],
    });
    chat.id = "s2"; // /new: same chat, new session
    await bus.notify("post_llm_call", {
      ...info,
      session_id: "s2",
      user_message: "hi",
      assistant_response: "yo",
      reason: "completed",
    });
    await hooks.settled();
    expect(seen.map(([e]) => e)).toEqual(["agent:start", "agent:step", "agent:end"]);
    expect(seen[0]?.[1]).toMatchObject({
      platform: "telegram",
      user_id: "u1",
      session_key: "key1",
      message: "hi",
    });
    expect(seen[1]?.[1]).toMatchObject({ iteration: 1, tool_names: ["terminal", "read_file"] });
    expect(seen[2]?.[1]).toMatchObject({ session_id: "s2", response: "yo" });
    bridge.detach();
    expect(bus.sources("pre_llm_call")).toEqual([]);
  });

  it("registers no bus handler for events no hook wants", () => {
    const hooks = new GatewayHooks(() => undefined);
    hooks.add("cmd", ["command:*"], () => undefined);
    const bus = new HookBus();
    new GatewayHookBridge(hooks).attach(bus);
    for (const e of [
      "pre_llm_call",
      "post_llm_call",
      "post_tool_call",
      "post_api_request",
      "on_session_start",
    ] as const)
      expect(bus.has(e)).toBe(false);
  });

  it("the observer fires command:<name> for known commands only, and session:reset for /reset", async () => {
    const hooks = new GatewayHooks(() => undefined);
    const seen: string[] = [];
    hooks.add("rec", ["command:*", "session:reset"], (e, c) => {
      seen.push(`${e} ${String(c["args"] ?? "")}`.trim());
    });
    const inner: string[] = [];
    const observer = new GatewayHookBridge(hooks).observe(
      {
        message: (d, _c, t) => inner.push(`${d}:${t}`),
        turn: () => undefined,
        requested: () => undefined,
        resolved: () => undefined,
      },
      createCommandRegistry(),
    );
    const chat = { platform: "telegram", chatId: "c", userId: "u" };
    observer.message("in", chat, "/model gpt-x", { sessionKey: "k" });
    observer.message("in", chat, "/nosuchcommand", { sessionKey: "k" });
    observer.message("in", chat, "just text", { sessionKey: "k" });
    observer.message("out", chat, "/model answer text", { sessionKey: "k" });
    observer.message("in", chat, "/reset", { sessionKey: "k" });
    await hooks.settled();
    expect(seen).toEqual(["command:model gpt-x", "command:new", "session:reset"]);
    expect(inner).toHaveLength(5);
  });
});
