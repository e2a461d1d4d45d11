// A fake GitHub Copilot CLI in ACP mode (`copilot --acp --stdio`): newline-delimited JSON-RPC 2.0
// on stdio, as the real one speaks it. What it does is chosen by words in the latest user message
// of the prompt Hermes sends (SCENARIO:<name>) and by its environment:
//
//   FAKE_ACP_LOG        file to append one JSON line per event to (start, request, answer)
//   FAKE_ACP_ENV_FILE   file to write its whole environment to, as JSON, at start
//   FAKE_ACP_NO_INIT=1  never answer `initialize`
//   FAKE_ACP_MODELS     comma-separated model ids offered through a `model` config option
//   FAKE_ACP_IMAGES=1   say it takes images in prompts
//   FAKE_ACP_BANNER=1   print a line that is not JSON on stdout first
//   FAKE_ACP_PROMPT_FILE  file to append each prompt's text to
//   FAKE_ACP_LOGGED_OUT=1 answer session/new with ACP's "authentication required"
//
// Scenarios: (none) a text answer with a thought; tool: a Hermes tool call, then an answer quoting
// the tool result; permission / permission-allow-only: asks session/request_permission and reports
// the outcome; fs: asks fs/write_text_file and reports the answer; slow: streams, then waits for
// session/cancel; deaf: streams, starts a grandchild, ignores cancel; silent: never answers;
// die: streams, then exits 3.
import { spawn } from "node:child_process";
import { appendFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";

const log = (entry) => {
  if (process.env.FAKE_ACP_LOG) appendFileSync(process.env.FAKE_ACP_LOG, `${JSON.stringify(entry)}\n`);
};
if (process.env.FAKE_ACP_ENV_FILE) writeFileSync(process.env.FAKE_ACP_ENV_FILE, JSON.stringify(process.env));
log({ event: "start", pid: process.pid, argv: process.argv.slice(2) });
if (process.env.FAKE_ACP_BANNER === "1") process.stdout.write("Welcome to the Copilot CLI (not JSON)\n\n");

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
let nextId = 1000;
const pending = new Map();
const ask = (method, params) =>
  new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    send({ id, method, params });
  });
const chunk = (sessionId, text, kind = "agent_message_chunk") =>
  send({
    method: "session/update",
    params: { sessionId, update: { sessionUpdate: kind, content: { type: "text", text } } },
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const models = (process.env.FAKE_ACP_MODELS ?? "").split(",").filter(Boolean);
const sessions = new Map();
let sessionCount = 0;

async function prompt(id, params) {
  const session = sessions.get(params.sessionId);
  const text = params.prompt.map((b) => b.text ?? "").join("");
  const latestUser = text.slice(text.lastIndexOf("\nUser:\n") + 1);
  const scenario = /SCENARIO:([\w-]+)/.exec(latestUser)?.[1] ?? "plain";
  if (process.env.FAKE_ACP_PROMPT_FILE) appendFileSync(process.env.FAKE_ACP_PROMPT_FILE, `${text}\n---\n`);
  const images = params.prompt.filter((b) => b.type === "image").map((b) => b.mimeType);
  log({
    event: "prompt",
    scenario,
    session: params.sessionId,
    model: session.model,
    chars: text.length,
    images,
  });
  const sid = params.sessionId;
  const end = (stopReason = "end_turn") => send({ id, result: { stopReason } });
  if (scenario === "plain") {
    chunk(sid, "thinking it over", "agent_thought_chunk");
    chunk(sid, "Hello from ");
    chunk(sid, "fake copilot");
    chunk(sid, ` (model ${session.model}).`);
    return end();
  }
  if (scenario === "tool") {
    const result =
      /Tool result \([^)]*\):\n([\s\S]*?)(?:\n\n(?:User|Assistant|Tool result)|\n\nContinue|$)/.exec(text);
    if (result) {
      chunk(sid, `The tool said: ${result[1].slice(0, 300)}`);
      return end();
    }
    const command = /COMMAND<<(.*?)>>/.exec(latestUser)?.[1] ?? "echo acp-tool-ran";
    chunk(sid, "Running it now.\n<tool_");
    chunk(sid, `call>${JSON.stringify({ name: "terminal", arguments: { command } })}</tool_call>`);
    return end();
  }
  if (scenario === "permission" || scenario === "permission-allow-only") {
    const options = [
      { optionId: "yes", name: "Allow", kind: "allow_once" },
      { optionId: "always", name: "Always allow", kind: "allow_always" },
    ];
    if (scenario === "permission") options.push({ optionId: "no", name: "Reject", kind: "reject_once" });
    const answer = await ask("session/request_permission", {
      sessionId: sid,
      toolCall: {
        toolCallId: "perm-1",
        title: "Run rm -rf ~/projects",
        kind: "execute",
        rawInput: { command: "rm -rf ~/projects" },
      },
      options,
    });
    chunk(sid, `permission outcome: ${JSON.stringify(answer.result ?? answer.error)}`);
    return end();
  }
  if (scenario === "fs") {
    const target = /PATH<<(.*?)>>/.exec(latestUser)?.[1] ?? "/tmp/fake-acp-fs.txt";
    const answer = await ask("fs/write_text_file", {
      sessionId: sid,
      path: target,
      content: "written by the agent",
    });
    chunk(sid, `fs answer: ${JSON.stringify(answer.error ?? answer.result)}`);
    return end();
  }
  if (scenario === "slow" || scenario === "deaf") {
    chunk(sid, "Partial answer");
    if (scenario === "deaf") {
      const grandchild = spawn("sleep", ["300"], { stdio: "ignore" });
      log({ event: "grandchild", pid: grandchild.pid });
      session.ignoreCancel = true;
    }
    session.onCancel = () => end("cancelled");
    log({ event: "waiting", session: sid });
    return;
  }
  if (scenario === "silent") {
    log({ event: "waiting", session: sid });
    return;
  }
  if (scenario === "die") {
    chunk(sid, "About to ");
    await sleep(20);
    process.stderr.write("fatal: the fake agent crashed on purpose\n");
    process.exit(3);
  }
  chunk(sid, `unknown scenario ${scenario}`);
  return end();
}

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  if (message.method === undefined) {
    pending.get(message.id)?.(message);
    pending.delete(message.id);
    return;
  }
  log({
    event: "request",
    method: message.method,
    params: message.method === "session/prompt" ? undefined : message.params,
  });
  const { id, method, params } = message;
  if (method === "initialize") {
    if (process.env.FAKE_ACP_NO_INIT === "1") return;
    return send({
      id,
      result: {
        protocolVersion: 1,
        agentCapabilities: {
          loadSession: false,
          sessionCapabilities: { close: {} },
          promptCapabilities: { image: process.env.FAKE_ACP_IMAGES === "1" },
        },
        agentInfo: { name: "fake-copilot", version: "0.0.1" },
        authMethods: [],
      },
    });
  }
  if (method === "session/new" && process.env.FAKE_ACP_LOGGED_OUT === "1") {
    return send({ id, error: { code: -32000, message: "Authentication required" } });
  }
  if (method === "session/new") {
    const sessionId = `fake-session-${++sessionCount}`;
    sessions.set(sessionId, { model: models[0] ?? "default-model" });
    const result = { sessionId };
    if (models.length > 0) {
      result.configOptions = [
        {
          id: "model",
          name: "Model",
          category: "model",
          type: "select",
          currentValue: models[0],
          options: models.map((value) => ({ value, name: value })),
        },
      ];
    }
    return send({ id, result });
  }
  if (method === "session/set_config_option") {
    sessions.get(params.sessionId).model = params.value;
    return send({ id, result: { configOptions: [] } });
  }
  if (method === "session/close") {
    sessions.delete(params.sessionId);
    return send({ id, result: {} });
  }
  if (method === "session/prompt") {
    prompt(id, params);
    return;
  }
  if (method === "session/cancel") {
    const session = sessions.get(params.sessionId);
    if (session && !session.ignoreCancel) session.onCancel?.();
    return;
  }
  if (id !== undefined) send({ id, error: { code: -32601, message: `Method not found: ${method}` } });
});
