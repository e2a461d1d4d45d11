/**
 * The gateway's control socket as its callers see it: the protocol (method names, parameter and
 * result types) and a typed client. The gateway serves it on `<home>/gateway.sock` while it runs
 * (src/gateway/control/); `hermes gateway status`, `hermes mcp serve` and a future dashboard ask
 * it for live state without importing the gateway. Newline-delimited JSON-RPC 2.0
 * (`util/json-rpc-socket.ts`); only the home's owner can connect (the file is 0600).
 */
import { join } from "node:path";
import { connectJsonRpc, type JsonRpcClient } from "../util/json-rpc-socket.js";

export const CONTROL_SOCKET_NAME = "gateway.sock";

/** Where a home's gateway listens (the profile's own home with `-p`). */
export function controlSocketPath(home: string): string {
  return join(home, CONTROL_SOCKET_NAME);
}

export type PlatformState = "connected" | "failed" | "disconnected";

export interface PlatformStatus {
  name: string;
  state: PlatformState;
  /** Why it failed to connect (state `failed`). */
  error?: string;
  /** ISO time of the last state change. */
  since: string;
}

export interface RunningTurn {
  session_key: string;
  session_id: string | null;
  platform: string;
  chat_id: string;
  /** ISO time the turn started. */
  started_at: string;
}

export interface GatewayStatus {
  pid: number;
  /** ISO time the gateway started. */
  started_at: string;
  version: string;
  home: string;
  /** "api_server http://127.0.0.1:8642", "cron (every 60 s)", platform names. */
  services: string[];
  platforms: PlatformStatus[];
  running_turns: RunningTurn[];
  pending_approvals: number;
}

export interface ChannelInfo {
  /** What `messages.send` takes: `platform:chat_id[:thread_id]`. */
  target: string;
  platform: string;
  chat_id: string;
  thread_id?: string;
  name: string;
  chat_type: string;
  /** The platform's home channel (`/sethome`, `<PLATFORM>_HOME_CHANNEL`). */
  home?: boolean;
  /** The session key of the conversation held in this chat, when there is one. */
  session_key?: string;
}

export interface ApprovalInfo {
  /** Answer with `approvals.respond`. */
  id: string;
  session_key: string;
  platform: string;
  chat_id: string;
  user_id: string;
  command: string;
  reason: string;
  /** A protected path: only the chat's user can approve it (once); the socket can only deny. */
  protected_path: boolean;
  created_at: string;
  /** ISO time it is denied if nobody answers. */
  expires_at: string;
  /** The gateway instance whose turn waits on it (several instances on PostgreSQL). */
  instance?: string;
}

/** `once`, `session`, `always`, `deny`: the answers a chat user has. */
export type ApprovalAnswer = "once" | "session" | "always" | "deny";

export type GatewayEventType =
  | "message"
  | "approval_requested"
  | "approval_resolved"
  | "platform_up"
  | "platform_down";

export interface GatewayEvent {
  /** Strictly increasing within one gateway run; poll with `after_cursor`. */
  cursor: number;
  type: GatewayEventType;
  /** ISO time. */
  at: string;
  /** The conversation, when the event belongs to one. */
  session_key?: string;
  platform?: string;
  [field: string]: unknown;
}

export interface EventsPage {
  events: GatewayEvent[];
  /** Pass as `after_cursor` next time. */
  next_cursor: number;
  /**
   * Events after the given cursor that fell out of the ring buffer before they were read (0 when
   * none were lost): the caller was too slow and should re-read state.
   */
  dropped: number;
}

export interface SendResult {
  target: string;
  platform: string;
  chat_id: string;
  thread_id?: string;
}

/** The methods and their parameter/result types. */
export interface ControlMethods {
  status: { params: Record<string, never>; result: GatewayStatus };
  "channels.list": { params: { platform?: string }; result: { channels: ChannelInfo[] } };
  "messages.send": { params: { target: string; message: string }; result: SendResult };
  "approvals.list": { params: Record<string, never>; result: { approvals: ApprovalInfo[] } };
  "approvals.respond": {
    params: { id: string; decision: ApprovalAnswer };
    result: { id: string; decision: ApprovalAnswer; resolved: true };
  };
  "events.poll": {
    params: { after_cursor?: number; session_key?: string; limit?: number };
    result: EventsPage;
  };
  "events.wait": {
    params: { after_cursor?: number; session_key?: string; timeout_ms?: number };
    result: { event: GatewayEvent | null; next_cursor: number; dropped: number };
  };
}

export type ControlMethod = keyof ControlMethods;

/** Longest `events.wait` the gateway honours (5 minutes, as upstream caps it). */
export const MAX_WAIT_MS = 300_000;

export interface GatewayControl {
  call<M extends ControlMethod>(
    method: M,
    params?: ControlMethods[M]["params"],
    options?: { timeoutMs?: number },
  ): Promise<ControlMethods[M]["result"]>;
  close(): void;
}

/**
 * Connects to the home's running gateway; null when none listens (no socket file, or a stale one
 * nobody accepts on). Other failures (EACCES: another user's socket) throw with the path.
 */
export async function connectGatewayControl(home: string): Promise<GatewayControl | null> {
  const path = controlSocketPath(home);
  let client: JsonRpcClient;
  try {
    client = await connectJsonRpc(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ECONNREFUSED") return null;
    throw new Error(
      `could not connect to the gateway's control socket ${path}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  return {
    call: (method, params, options) =>
      client.call(method, (params ?? {}) as Record<string, unknown>, options) as never,
    close: () => client.close(),
  };
}
