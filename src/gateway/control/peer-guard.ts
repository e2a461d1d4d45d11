/**
 * Who may change things through the control socket. The socket is 0600, so only the gateway's user
 * reaches it, but the agent's own tool processes run as that user too: a prompt-injected model
 * could `nc -U ~/.hermes/gateway.sock` from the terminal tool and answer its own pending approval.
 *
 * So every method that changes state (anything not in READ_ONLY, including methods added later)
 * first learns the connecting process from the kernel (util/peer-process.ts) and refuses it when it
 * runs under the gateway: the terminal tool's shells, background processes, execute_code scripts,
 * MCP stdio servers and whatever they start, also once orphaned (`nohup … &`), by the process group
 * and session they keep. The gateway's own in-process clients pass. When the
 * peer cannot be identified or its ancestry read, the call is refused: the user still answers in
 * the chat. The verdict is kept per connection.
 */
import type { Socket } from "node:net";
import { JSON_RPC_ERRORS, type JsonRpcAuthorize, JsonRpcError } from "../../util/json-rpc-socket.js";
import { descendsFrom, type ProcessIds, processIds, unixPeerPid } from "../../util/peer-process.js";

/** Methods that only read; every other method needs a caller from outside the gateway's tree. */
export const READ_ONLY_METHODS: ReadonlySet<string> = new Set([
  "status",
  "channels.list",
  "approvals.list",
  "events.poll",
  "events.wait",
]);

export interface PeerGuardOptions {
  /** The gateway's pid (the root of its tool processes). */
  gatewayPid?: number;
  /** Finds the connecting pid (tests inject one). */
  peerPid?: (socket: Socket) => Promise<number | undefined>;
  /** Whether `pid` runs under `ancestor`: true, false, or undefined when unknown. */
  descends?: (pid: number, ancestor: number) => boolean | undefined;
  /** The peer's process group and session (tests inject them). */
  ids?: (pid: number) => ProcessIds | undefined;
  /** Told about each refusal (the gateway logs it). */
  onRefused?: (method: string, why: string) => void;
}

/** Why a peer is refused, or undefined when it may change state. */
export async function peerRefusal(
  socket: Socket,
  options: PeerGuardOptions = {},
): Promise<string | undefined> {
  const gateway = options.gatewayPid ?? process.pid;
  const pid = await (options.peerPid ?? unixPeerPid)(socket);
  if (pid === undefined)
    return "the gateway could not tell which process is calling (no way to ask the kernel here)";
  if (pid === gateway) return undefined;
  const descends = options.descends ?? descendsFrom;
  const under = descends(pid, gateway);
  if (under === true)
    return `the caller (pid ${pid}) runs under this gateway, as the agent's tools do (terminal, background processes, execute_code, MCP servers)`;
  if (under === undefined)
    return `the caller (pid ${pid}) exited or cannot be inspected, so it may run under this gateway`;
  // Orphaned (`nohup … &`, a subshell's background job): it keeps the process group and session
  // of the tool shell that started it, and the gateway starts each tool in a session of its own.
  const ids = (options.ids ?? processIds)(pid);
  if (!ids) return `the caller (pid ${pid}) exited or cannot be inspected, so it may run under this gateway`;
  for (const leader of new Set([ids.pgrp, ids.sid])) {
    if (leader <= 1 || leader === pid) continue;
    if (leader === gateway || descends(leader, gateway) === true)
      return `the caller (pid ${pid}) was started by one of this gateway's tool processes (its session or process group leader, pid ${leader}, runs under the gateway)`;
  }
  return undefined;
}

/** The control socket's `authorize`: read-only methods pass; the rest need an outside caller. */
export function controlAuthorizer(options: PeerGuardOptions = {}): JsonRpcAuthorize {
  const verdicts = new WeakMap<Socket, Promise<string | undefined>>();
  return async (method, socket) => {
    if (READ_ONLY_METHODS.has(method)) return;
    let verdict = verdicts.get(socket);
    if (!verdict) {
      verdict = peerRefusal(socket, options).catch(() => "the gateway could not inspect the caller");
      verdicts.set(socket, verdict);
    }
    const why = await verdict;
    if (why === undefined) return;
    options.onRefused?.(method, why);
    throw new JsonRpcError(
      JSON_RPC_ERRORS.application,
      `${method} refused: ${why}. Only the user answers approvals and sends through the gateway: in the chat, the dashboard, or \`hermes mcp serve\` started outside the agent.`,
    );
  };
}
