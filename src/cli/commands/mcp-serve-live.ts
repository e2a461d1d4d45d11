/**
 * `hermes mcp serve`'s live tools: they ask the home's running gateway over its control socket
 * (`state/gateway-control.ts`) for channels, events and pending approvals, and send through it.
 * Each call opens its own connection, so a gateway restarted meanwhile is found again; when none
 * runs, the tool says so and how to start one. Argument names and answers follow upstream's.
 */
import {
  type ApprovalAnswer,
  type ControlMethod,
  type ControlMethods,
  connectGatewayControl,
  MAX_WAIT_MS,
} from "../../state/gateway-control.js";
import { JsonRpcError } from "../../util/json-rpc-socket.js";
import { int, type Json, type ServeTool, str } from "./mcp-serve-store.js";
import { withSharedApprovals } from "./shared-approvals.js";

/** Upstream's decisions, and the chat's own words for them. */
const DECISIONS: Readonly<Record<string, ApprovalAnswer>> = {
  "allow-once": "once",
  "allow-session": "session",
  "allow-always": "always",
  deny: "deny",
  once: "once",
  session: "session",
  always: "always",
};

/** Calls the gateway; throws the answer's error text, or that no gateway runs. */
async function ask<M extends ControlMethod>(
  home: string,
  method: M,
  params: ControlMethods[M]["params"],
  timeoutMs = 30_000,
): Promise<ControlMethods[M]["result"]> {
  const control = await connectGatewayControl(home);
  if (!control) {
    throw new Error(
      `No gateway is running for ${home}, so there are no live channels, events or approvals. ` +
        "Start it with `hermes gateway start` (or `hermes gateway run` in a terminal).",
    );
  }
  try {
    return await control.call(method, params, { timeoutMs });
  } catch (error) {
    if (error instanceof JsonRpcError) throw new Error(error.message);
    throw new Error(
      `The gateway did not answer ${method}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

const keyFilter = {
  session_key: { type: "string", description: "Only this conversation's events (a session_key)." },
};

/** The tools that need a running gateway. */
export function liveTools(home: string): ServeTool[] {
  return [
    {
      name: "channels_list",
      description:
        "The chats the running gateway can send to (home channels and chats it has talked in); each target " +
        "goes straight into messages_send.",
      inputSchema: {
        type: "object",
        properties: {
          platform: { type: "string", description: "Only this platform: telegram, discord, ..." },
        },
      },
      run: async (args) => {
        const platform = str(args, "platform");
        const { channels } = await ask(home, "channels.list", platform ? { platform } : {});
        return { count: channels.length, channels };
      },
    },
    {
      name: "messages_send",
      description:
        'Send a message to a chat through the running gateway. target is "platform:chat_id" (from channels_list), ' +
        '"platform:chat_id:thread_id", "platform:#channel-name", or just "platform" for its home channel. ' +
        "Secrets are redacted as in every send.",
      inputSchema: {
        type: "object",
        properties: {
          target: {
            type: "string",
            description: 'Where: "telegram:123456789", "discord:#general", "slack".',
          },
          message: { type: "string", description: "The text (markdown); MEDIA:/path attaches a file." },
        },
        required: ["target", "message"],
      },
      run: async (args) => {
        const target = str(args, "target");
        const message = typeof args["message"] === "string" ? args["message"] : "";
        if (!target || !message.trim()) throw new Error("Both target and message are required.");
        return { success: true, ...(await ask(home, "messages.send", { target, message })) };
      },
    },
    {
      name: "events_poll",
      description:
        "Events since a cursor: message (in from a user, out from the agent), approval_requested, " +
        "approval_resolved, platform_up, platform_down. Pass next_cursor back as after_cursor.",
      inputSchema: {
        type: "object",
        properties: {
          after_cursor: {
            type: "integer",
            minimum: 0,
            description: "Events after this cursor (0: from the start).",
          },
          ...keyFilter,
          limit: {
            type: "integer",
            minimum: 1,
            maximum: 200,
            description: "At most this many (default 20).",
          },
        },
      },
      run: (args) => {
        const sessionKey = str(args, "session_key");
        return ask(home, "events.poll", {
          after_cursor: int(args, "after_cursor", 0, Number.MAX_SAFE_INTEGER, 0),
          limit: int(args, "limit", 20, 200),
          ...(sessionKey ? { session_key: sessionKey } : {}),
        });
      },
    },
    {
      name: "events_wait",
      description:
        "Wait for the next event after a cursor (long poll), up to timeout_ms; answers at once when one is there.",
      inputSchema: {
        type: "object",
        properties: {
          after_cursor: { type: "integer", minimum: 0, description: "Wait for events after this cursor." },
          ...keyFilter,
          timeout_ms: {
            type: "integer",
            minimum: 0,
            maximum: MAX_WAIT_MS,
            description: "Default 30000, at most 300000.",
          },
        },
      },
      run: async (args) => {
        const sessionKey = str(args, "session_key");
        const timeout = int(args, "timeout_ms", 30_000, MAX_WAIT_MS, 0);
        const answer = await ask(
          home,
          "events.wait",
          {
            after_cursor: int(args, "after_cursor", 0, Number.MAX_SAFE_INTEGER, 0),
            timeout_ms: timeout,
            ...(sessionKey ? { session_key: sessionKey } : {}),
          },
          timeout + 10_000,
        );
        return answer.event ? answer : { ...answer, reason: "timeout" };
      },
    },
    {
      name: "permissions_list_open",
      description:
        "Dangerous commands waiting for approval in the running gateway's chats: id, command, why, chat, when " +
        "it is denied if nobody answers. With several gateway instances, every instance's.",
      inputSchema: { type: "object", properties: {} },
      run: async () => {
        // Several instances on PostgreSQL: every instance's, from the database.
        const shared = await withSharedApprovals(home, process.env, (records) => records.list());
        const { approvals } = shared ? { approvals: shared.value } : await ask(home, "approvals.list", {});
        return { count: approvals.length, approvals };
      },
    },
    {
      name: "permissions_respond",
      description:
        'Answer a pending approval: "allow-once", "allow-session", "allow-always" or "deny". A protected path ' +
        "(Hermes's own config, secrets) can only be approved in the chat; it can be denied here.",
      inputSchema: {
        type: "object",
        properties: {
          id: { type: "string", description: "The approval id from permissions_list_open." },
          decision: { type: "string", enum: ["allow-once", "allow-session", "allow-always", "deny"] },
        },
        required: ["id", "decision"],
      },
      run: async (args: Json) => {
        const id = str(args, "id");
        const given = str(args, "decision") ?? "";
        const decision = Object.hasOwn(DECISIONS, given.toLowerCase())
          ? DECISIONS[given.toLowerCase()]
          : undefined;
        if (!id) throw new Error("Give the approval id from permissions_list_open.");
        if (!decision)
          throw new Error(
            `Invalid decision: "${given}". Use allow-once, allow-session, allow-always or deny.`,
          );
        const shared = await withSharedApprovals(home, process.env, (records) =>
          records.answer(id, decision, "mcp"),
        );
        if (!shared) await ask(home, "approvals.respond", { id, decision });
        return { resolved: true, approval_id: id, decision: given.toLowerCase() };
      },
    },
  ];
}
