// An external ACP agent for tests, over stdio with the official SDK: on a prompt it reports a
// tool call, asks permission to run `rm -rf build` (logging the answer it got), streams a line,
// then either ends its turn or (FAKE_ACP_MODE=hang) waits until the client cancels. Every step is
// appended to FAKE_ACP_LOG as one JSON line, so a test sees what the agent was told.
import { appendFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { agent, ndJsonStream, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";

const log = (entry) => {
  if (process.env.FAKE_ACP_LOG) appendFileSync(process.env.FAKE_ACP_LOG, `${JSON.stringify(entry)}\n`);
};
const cancels = new Map();
let client;
const app = agent({ name: "fake-acp" });
app.onConnect((connection) => {
  client = connection.client;
});
app.onRequest("initialize", () => ({ protocolVersion: PROTOCOL_VERSION, agentCapabilities: {} }));
app.onRequest("session/new", () => ({ sessionId: "fake-1" }));
app.onNotification("session/cancel", ({ params }) => {
  log({ cancel: params.sessionId });
  cancels.get(params.sessionId)?.();
});
app.onRequest("session/prompt", async ({ params }) => {
  const sessionId = params.sessionId;
  const cancelled = new Promise((resolve) => cancels.set(sessionId, () => resolve("cancelled")));
  await client.notify("session/update", {
    sessionId,
    update: { sessionUpdate: "tool_call", toolCallId: "t1", title: "Run rm -rf build", status: "pending" },
  });
  const answer = await client.request("session/request_permission", {
    sessionId,
    toolCall: { toolCallId: "t1", title: "Run rm -rf build", rawInput: { command: "rm -rf build" } },
    options: [
      { optionId: "yes", name: "Allow", kind: "allow_once" },
      { optionId: "no", name: "Reject", kind: "reject_once" },
    ],
  });
  log({ permission: answer.outcome });
  await client.notify("session/update", {
    sessionId,
    update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "working on it" } },
  });
  if (process.env.FAKE_ACP_MODE === "hang") {
    log({ waiting: true });
    return { stopReason: await cancelled };
  }
  return { stopReason: "end_turn" };
});
app.connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
