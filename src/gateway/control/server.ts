/**
 * The gateway's control socket (`<home>/gateway.sock`, 0600): newline-delimited JSON-RPC 2.0 for
 * whatever asks a running gateway for live state (`hermes gateway status`, `hermes mcp serve`, a
 * dashboard). The protocol's types are in `state/gateway-control.ts`; this file binds its methods
 * to the running router, adapters and event log. Sends go through the router's delivery path, so
 * they are chunked for the platform and redacted like every other send.
 */
import type { HermesConfig } from "../../config/defaults.js";
import {
  type ApprovalAnswer,
  type ChannelInfo,
  type ControlMethods,
  controlSocketPath,
  type GatewayStatus,
  MAX_WAIT_MS,
} from "../../state/gateway-control.js";
import { readGatewayConversations } from "../../state/gateway-sessions.js";
import {
  JSON_RPC_ERRORS,
  JsonRpcError,
  type JsonRpcServer,
  serveJsonRpc,
} from "../../util/json-rpc-socket.js";
import { hermesVersion } from "../../util/version.js";
import type { SharedApprovals } from "../coordination/shared-approvals.js";
import { homeChannel } from "../messaging/deliver.js";
import type { MessageRouter } from "../messaging/router.js";
import { controlAuthorizer } from "./peer-guard.js";
import { approvalFields, type GatewayControlState } from "./state.js";

export interface ControlServerOptions {
  home: string;
  config: HermesConfig;
  env: Readonly<Record<string, string | undefined>>;
  state: GatewayControlState;
  /** The running services ("api_server http://…", "telegram", "cron (every 60 s)"). */
  services: readonly string[];
  /** The message router; undefined when no chat platform runs. */
  router: () => MessageRouter | undefined;
  /** The connected platforms' names. */
  connected: () => readonly string[];
  /** Several instances: every instance's approvals are listed and answered (PostgreSQL). */
  shared?: SharedApprovals;
  /** Told when a state-changing call is refused because it comes from under the gateway. */
  onRefused?: (method: string, why: string) => void;
  /**
   * The process whose descendants are the agent's tools (default: this one). A test that hosts
   * the server in-process and plays the user from child processes names another.
   */
  agentPid?: number;
}

const invalid = (message: string) => new JsonRpcError(JSON_RPC_ERRORS.invalidParams, message);

function optionalString(params: Record<string, unknown>, key: string): string | undefined {
  const value = params[key];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw invalid(`${key} must be a string`);
  return value;
}

function bounded(params: Record<string, unknown>, key: string, fallback: number, max: number): number {
  const value = params[key];
  if (value === undefined || value === null) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0)
    throw invalid(`${key} must be a non-negative number, got ${JSON.stringify(value)}`);
  return Math.min(Math.floor(n), max);
}

const DECISIONS: readonly ApprovalAnswer[] = ["once", "session", "always", "deny"];

/** Splits `platform:chat[:thread]`; a chat may be `#name` (looked up among known channels). */
function parseTarget(target: string): { platform: string; chat?: string; thread?: string } {
  const [platform = "", ...rest] = target.split(":");
  if (!platform) throw invalid(`target must look like "platform:chat_id", got "${target}"`);
  if (rest.length === 0 || (rest.length === 1 && rest[0] === "")) return { platform };
  // As `hermes send` reads it: the last part after a second colon is the thread (topic, thread ts).
  if (rest.length >= 2) {
    const thread = rest.at(-1) as string;
    return { platform, chat: rest.slice(0, -1).join(":"), thread };
  }
  return { platform, chat: rest[0] as string };
}

/** Methods bound to the running gateway (exported for tests that call them without a socket). */
export function controlHandlers(options: ControlServerOptions) {
  const { state, shared } = options;
  const approvals = async () =>
    shared ? await shared.list() : (options.router()?.approvals.list() ?? []).map(approvalFields);
  const channels = (platformFilter?: string): ChannelInfo[] => {
    const out: ChannelInfo[] = [];
    const seen = new Set<string>();
    const add = (channel: ChannelInfo) => {
      if (seen.has(channel.target)) return;
      seen.add(channel.target);
      out.push(channel);
    };
    const connected = options.connected().filter((p) => !platformFilter || p === platformFilter);
    for (const platform of connected) {
      const home = homeChannel(platform, options.env, options.config);
      if (home)
        add({
          target: `${platform}:${home.chatId}${home.threadId ? `:${home.threadId}` : ""}`,
          platform,
          chat_id: home.chatId,
          ...(home.threadId ? { thread_id: home.threadId } : {}),
          name: "home channel",
          chat_type: "",
          home: true,
        });
    }
    for (const c of readGatewayConversations(options.home)) {
      if (!connected.includes(c.platform) || !c.chat_id) continue;
      add({
        target: `${c.platform}:${c.chat_id}${c.thread_id ? `:${c.thread_id}` : ""}`,
        platform: c.platform,
        chat_id: c.chat_id,
        ...(c.thread_id ? { thread_id: c.thread_id } : {}),
        name: c.display_name || c.chat_name || c.user_name,
        chat_type: c.chat_type,
        session_key: c.session_key,
      });
    }
    return out;
  };

  const handlers: {
    [M in keyof ControlMethods]: (params: Record<string, unknown>, signal: AbortSignal) => unknown;
  } = {
    status: async (): Promise<GatewayStatus> => ({
      pid: process.pid,
      started_at: state.startedAt.toISOString(),
      version: hermesVersion(),
      home: options.home,
      services: [...options.services],
      platforms: state.platformList(),
      running_turns: state.runningTurns(),
      pending_approvals: (await approvals()).length,
    }),
    "channels.list": (params) => ({ channels: channels(optionalString(params, "platform")) }),
    "messages.send": async (params) => {
      const target = optionalString(params, "target");
      const message = optionalString(params, "message");
      if (!target || !message?.trim()) throw invalid("target and message are both required");
      const parsed = parseTarget(target.trim());
      const router = options.router();
      if (!router || !options.connected().includes(parsed.platform)) {
        const names = options.connected();
        throw new JsonRpcError(
          JSON_RPC_ERRORS.application,
          `${parsed.platform} is not connected to this gateway${names.length ? ` (connected: ${names.join(", ")})` : " (no chat platform is connected)"}.`,
        );
      }
      let chatId = parsed.chat;
      let threadId = parsed.thread;
      if (chatId?.startsWith("#")) {
        const name = chatId.slice(1).toLowerCase();
        const found = channels(parsed.platform).find((c) => c.name.toLowerCase().replace(/^#/, "") === name);
        if (!found)
          throw invalid(`no known ${parsed.platform} channel is named "${chatId}"; see channels.list`);
        chatId = found.chat_id;
        threadId ??= found.thread_id;
      }
      await router.deliver(
        parsed.platform,
        { ...(chatId ? { chatId } : {}), ...(threadId ? { threadId } : {}) },
        message,
      );
      const resolved = chatId ?? homeChannel(parsed.platform, options.env, options.config)?.chatId ?? "";
      return {
        target: `${parsed.platform}:${resolved}${threadId ? `:${threadId}` : ""}`,
        platform: parsed.platform,
        chat_id: resolved,
        ...(threadId ? { thread_id: threadId } : {}),
      };
    },
    "approvals.list": async () => ({ approvals: await approvals() }),
    "approvals.respond": async (params) => {
      const id = optionalString(params, "id");
      const decision = optionalString(params, "decision");
      if (!id) throw invalid("id is required (from approvals.list)");
      if (!decision || !DECISIONS.includes(decision as ApprovalAnswer))
        throw invalid(`decision must be one of ${DECISIONS.join(", ")}, got ${JSON.stringify(decision)}`);
      const router = options.router();
      if (!router && !shared)
        throw new JsonRpcError(JSON_RPC_ERRORS.application, `No pending approval with id "${id}".`);
      try {
        if (shared) await shared.respond(id, decision as ApprovalAnswer);
        else router?.approvals.respondById(id, decision as ApprovalAnswer, "control");
      } catch (error) {
        throw new JsonRpcError(
          JSON_RPC_ERRORS.application,
          error instanceof Error ? error.message : String(error),
        );
      }
      return { id, decision, resolved: true };
    },
    "events.poll": (params) =>
      state.events.poll(bounded(params, "after_cursor", 0, Number.MAX_SAFE_INTEGER), {
        sessionKey: optionalString(params, "session_key"),
        limit: Math.max(1, bounded(params, "limit", 20, 500)),
      }),
    "events.wait": async (params, signal) => {
      const after = bounded(params, "after_cursor", 0, Number.MAX_SAFE_INTEGER);
      const event = await state.events.wait(after, {
        sessionKey: optionalString(params, "session_key"),
        timeoutMs: bounded(params, "timeout_ms", 30_000, MAX_WAIT_MS),
        signal,
      });
      return {
        event,
        next_cursor: event?.cursor ?? state.events.fromCursor(after),
        dropped: state.events.dropped(after),
      };
    },
  };
  return handlers;
}

/**
 * Serves the control socket of `home`; throws when it cannot be bound (the caller reports it).
 * State-changing methods are refused to the agent's own tool processes (peer-guard.ts).
 */
export function startControlServer(options: ControlServerOptions): Promise<JsonRpcServer> {
  return serveJsonRpc(controlSocketPath(options.home), controlHandlers(options), {
    authorize: controlAuthorizer({
      ...(options.onRefused ? { onRefused: options.onRefused } : {}),
      ...(options.agentPid ? { gatewayPid: options.agentPid } : {}),
    }),
  });
}
