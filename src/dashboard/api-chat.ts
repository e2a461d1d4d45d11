/**
 * `/api/chat…`: talk to the agent from the page. `POST /api/chat` starts a conversation (a new
 * session with source `dashboard`) or continues one (`session_id`: an open conversation, or any
 * stored session, resumed) and answers the turn as server-sent events. The agent is the same as the
 * terminal's: `ChatSession` with the home's config, provider, toolsets (`platform_toolsets.dashboard`,
 * else the CLI's) and approval policy; this file only opens sessions and relays events. One turn
 * at a time per conversation (409 while one runs); approvals are answered with
 * `POST /api/chat/:id/approvals/:approval`, and `POST /api/chat/:id/stop` interrupts the turn.
 */
import { ChatSession } from "../agent/chat-session.js";
import { NoProviderError, resolveRuntime } from "../ai/resolve.js";
import type { HermesConfig } from "../config/defaults.js";
import { isYoloMode } from "../config/precedence.js";
import { setConfigValue } from "../config/write.js";
import { durabilityOptions, openRecordingStore } from "../state/recording-store.js";
import { type SessionStore, SessionStoreError } from "../state/types.js";
import { createBuiltinRegistry } from "../tools/builtin.js";
import type { McpManager } from "../tools/mcp/manager.js";
import { platformToolsets } from "../tools/platform-tools.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { ApprovalDecision } from "../tools/types.js";
import { homeLogger, type Logger } from "../util/log.js";
import { isCommandInput, runChatCommand } from "./api-chat-commands.js";
import { APPROVAL_CHOICES, Conversation } from "./api-chat-conversation.js";
import { ApiError, type EventSink, type Route } from "./http.js";

export const DASHBOARD_SOURCE = "dashboard";
/** The `user_id` of dashboard sessions (one user: whoever holds the dashboard's credentials). */
export const DASHBOARD_USER = "dashboard";
/** Longest message accepted (characters); the body cap (1 MiB) is the other limit. */
const MAX_MESSAGE_CHARS = 200_000;
/** Idle conversations kept open (their shells alive); the least recently used beyond it close. */
const MAX_IDLE_CONVERSATIONS = 8;
/** An idle conversation closes after this long without a turn. */
const IDLE_CLOSE_MS = 30 * 60_000;
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export interface ChatApiDeps {
  home: string;
  /** Where the agent's tools work (the dashboard's working directory). */
  cwd: string;
  /** The home's settings now (`.env` applied): read at each new conversation. */
  settings: () => { env: Record<string, string | undefined>; config: HermesConfig; withheldEnv: string[] };
  log?: (line: string) => void;
}

export interface ChatApi {
  routes: Route[];
  /** Interrupts running turns and closes every conversation (the dashboard is stopping). */
  close(): Promise<void>;
}

function sessionIdParam(value: string | undefined): string {
  if (!value || !SESSION_ID.test(value)) throw new ApiError(400, "not a session id");
  return value;
}

export function chatApi(deps: ChatApiDeps): ChatApi {
  const conversations = new Map<string, Conversation>();
  /** Session ids being opened by a request right now (no second request may open the same). */
  const opening = new Set<string>();
  let store: SessionStore | undefined;
  /**
   * The tools every conversation shares: the built-ins and config.yaml's MCP servers, started
   * with the first conversation.
   */
  let tools: Promise<{ registry: ToolRegistry; mcp: McpManager | undefined }> | undefined;
  let logger: Logger | undefined;
  const warn = (message: string) => deps.log?.(`dashboard chat: ${message}`);

  const storeOf = (config: HermesConfig): SessionStore => {
    store ??= openRecordingStore(deps.home, {
      open: durabilityOptions(config.state),
      notify: (message) => warn(`state.db: ${message}`),
    });
    return store;
  };

  const rekey = (from: string, to: string) => {
    const conversation = conversations.get(from);
    if (!conversation) return;
    conversations.delete(from);
    conversations.set(to, conversation);
  };

  const sweep = () => {
    const now = Date.now();
    const idle = [...conversations.entries()]
      .filter(([, c]) => !c.busy)
      .sort((a, b) => b[1].lastUsed - a[1].lastUsed);
    const closing = idle.filter(
      ([, c], i) => i >= MAX_IDLE_CONVERSATIONS || now - c.lastUsed > IDLE_CLOSE_MS,
    );
    for (const [id, c] of closing) {
      conversations.delete(id);
      // In the background: a closing session may wait for its learning review.
      void c.session.close("dashboard_idle").catch(() => undefined);
    }
  };

  const toolsetsOf = (config: HermesConfig): string[] =>
    platformToolsets(
      config as unknown as Record<string, unknown>,
      DASHBOARD_SOURCE,
      platformToolsets(config as unknown as Record<string, unknown>, "cli", config.toolsets),
    );

  /** Starts `mcp_servers` (when one is enabled) into `tools`, as a chat in the terminal does. */
  const startMcp = async (
    into: ToolRegistry,
    config: HermesConfig,
    env: Record<string, string | undefined>,
    resolved: ReturnType<typeof resolveRuntime>,
  ): Promise<McpManager | undefined> => {
    const servers = (config as unknown as Record<string, unknown>)["mcp_servers"];
    if (servers === undefined || servers === null) return undefined;
    try {
      const { hasEnabledMcpServers } = await import("../tools/mcp/config.js");
      if (!hasEnabledMcpServers(servers)) return undefined;
      const { startMcpServers } = await import("../tools/mcp/manager.js");
      const { modelSampler } = await import("../tools/mcp/sampling-model.js");
      return startMcpServers({
        config: servers,
        registry: into,
        env,
        onWarning: warn,
        sampler: modelSampler({ config, env, home: deps.home, runtime: resolved }),
        home: deps.home,
        cwd: deps.cwd,
      });
    } catch (error) {
      warn(`MCP servers not started: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  };

  /** Opens a conversation: a new session, or `resume` (an exact stored id). */
  const open = async (resume: string | undefined): Promise<Conversation> => {
    const { env, config, withheldEnv } = deps.settings();
    let resolved: ReturnType<typeof resolveRuntime>;
    try {
      resolved = resolveRuntime({ flags: {}, config, env, home: deps.home });
    } catch (error) {
      if (error instanceof NoProviderError) throw new ApiError(422, error.message);
      throw error;
    }
    const sessions = storeOf(config);
    if (resume && !(await sessions.getSession(resume))) {
      throw new ApiError(404, `no stored session ${JSON.stringify(resume)} to continue`);
    }
    tools ??= (async () => {
      const registry = createBuiltinRegistry();
      return { registry, mcp: await startMcp(registry, config, env, resolved) };
    })();
    const { registry, mcp } = await tools;
    logger ??= homeLogger(deps.home, config.logging, { component: DASHBOARD_SOURCE });
    const conversation = new Conversation(rekey);
    const session = await ChatSession.open({
      config,
      home: deps.home,
      env,
      cwd: deps.cwd,
      resolved,
      registry,
      ...(mcp ? { toolsReady: mcp.ready } : {}),
      toolsets: toolsetsOf(config),
      withheldEnv,
      yolo: isYoloMode(env),
      platform: DASHBOARD_SOURCE,
      source: DASHBOARD_SOURCE,
      // The home's owner: chat commands (`/sessions`, `/resume`) list a user's own sessions.
      userId: DASHBOARD_USER,
      store: sessions,
      autoTitle: true,
      logger,
      onWarning: warn,
      onApproval: conversation.prompt,
      onClarify: conversation.clarify,
      persistAlwaysApproval: (key: string) => {
        const list = [...new Set([...(config.command_allowlist ?? []), key])];
        config.command_allowlist = list;
        setConfigValue(deps.home, "command_allowlist", JSON.stringify(list));
      },
      ...(resume ? { resume } : {}),
    }).catch((error: unknown) => {
      if (error instanceof SessionStoreError) {
        throw new ApiError(error.code === "not_found" ? 404 : 409, error.message);
      }
      throw error;
    });
    conversation.attach(session);
    try {
      await session.agent.prepareEnvironment();
    } catch (error) {
      await session.close("environment").catch(() => undefined);
      throw new ApiError(422, error instanceof Error ? error.message : String(error));
    }
    return conversation;
  };

  /** The stream of one request: the session, then the command or turn, then queued messages. */
  const converse = async (
    conversation: Conversation,
    text: string,
    sink: EventSink,
    config: HermesConfig,
  ) => {
    try {
      sink.send("session", {
        session_id: conversation.id,
        title: await conversation.session.currentTitle(),
        resumed: conversation.session.resumed,
      });
      let inputs = [text];
      if (isCommandInput(text)) {
        inputs = await runChatCommand(conversation, text, sink, {
          toolsets: toolsetsOf(config),
          settings: { toolProgress: "all", busyMode: "interrupt", yolo: conversation.session.agent.yolo },
        });
        if (inputs.length === 0)
          sink.send("done", { reason: "command", text: "", session_id: conversation.id });
      }
      for (
        let next = inputs.shift();
        next !== undefined;
        next = inputs.shift() ?? conversation.queued.shift()
      ) {
        if (sink.signal.aborted) break;
        await conversation.runTurn(next, sink);
      }
    } finally {
      conversation.busy = false;
      conversation.lastUsed = Date.now();
    }
  };

  const find = (id: string): Conversation => {
    const conversation = conversations.get(sessionIdParam(id));
    if (!conversation) throw new ApiError(404, `no open chat conversation ${JSON.stringify(id)}`);
    return conversation;
  };

  const routes: Route[] = [
    {
      method: "POST",
      path: "/api/chat",
      summary:
        'send a message: {"message", "session_id"?} (none: a new session with source dashboard); answers the turn as server-sent events; 409 while a turn runs in that conversation',
      handler: async ({ body }) => {
        const message = body["message"];
        if (typeof message !== "string" || message.trim() === "") {
          throw new ApiError(400, '"message" (a non-empty string) is required');
        }
        if (message.length > MAX_MESSAGE_CHARS) {
          throw new ApiError(413, `the message is over ${MAX_MESSAGE_CHARS} characters`);
        }
        const raw = body["session_id"];
        if (raw !== undefined && raw !== null && typeof raw !== "string") {
          throw new ApiError(400, '"session_id" must be a string');
        }
        const wanted = typeof raw === "string" && raw !== "" ? sessionIdParam(raw) : undefined;
        sweep();
        let conversation = wanted ? conversations.get(wanted) : undefined;
        if (conversation?.busy || (wanted && opening.has(wanted))) {
          throw new ApiError(409, "a turn is already running in this conversation: wait for it or stop it");
        }
        if (conversation) conversation.busy = true;
        else {
          if (wanted) opening.add(wanted);
          try {
            conversation = await open(wanted);
          } finally {
            if (wanted) opening.delete(wanted);
          }
          conversation.busy = true;
          conversations.set(conversation.id, conversation);
        }
        const { config } = deps.settings();
        const mine = conversation;
        return { events: (sink) => converse(mine, message, sink, config) };
      },
    },
    {
      method: "POST",
      path: "/api/chat/:id/approvals/:approval",
      summary: `answer the turn's pending approval: {"decision": ${APPROVAL_CHOICES.map((c) => `"${c}"`).join(" | ")}} (a protected path: once or deny); 404 when that conversation has no such approval pending`,
      handler: ({ params, body }) => {
        const decision = body["decision"];
        if (typeof decision !== "string" || !APPROVAL_CHOICES.includes(decision as ApprovalDecision)) {
          throw new ApiError(400, `"decision" must be one of ${APPROVAL_CHOICES.join(", ")}`);
        }
        find(params["id"] ?? "").answer(params["approval"] ?? "", decision as ApprovalDecision);
        return { json: { answered: true, decision } };
      },
    },
    {
      method: "POST",
      path: "/api/chat/:id/questions/:question",
      summary:
        'answer the question the agent asked (the clarify tool): {"answer"}; 404 when that conversation has no such question pending',
      handler: ({ params, body }) => {
        const text = body["answer"];
        if (typeof text !== "string" || text.trim() === "") {
          throw new ApiError(400, '"answer" (a non-empty string) is required');
        }
        find(params["id"] ?? "").reply(params["question"] ?? "", text);
        return { json: { answered: true } };
      },
    },
    {
      method: "POST",
      path: "/api/chat/:id/stop",
      summary: "interrupt the conversation's running turn (as Ctrl+C: running commands are killed)",
      handler: async ({ params }) => {
        const stopped = await find(params["id"] ?? "").stop();
        return { json: { stopped } };
      },
    },
  ];

  return {
    routes,
    close: async () => {
      const all = [...conversations.values()];
      conversations.clear();
      await Promise.all(all.map((c) => c.stop(2000).catch(() => false)));
      await Promise.all(all.map((c) => c.session.close("dashboard_stopped").catch(() => undefined)));
      const shared = await tools?.catch(() => undefined);
      await shared?.mcp?.close().catch(() => undefined);
      store?.close();
    },
  };
}
