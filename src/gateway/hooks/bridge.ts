/**
 * Where the gateway's hook events come from, without growing the router: the agent-side events
 * (`session:start|end`, `agent:start|step|end`) are read off the process's hook bus, which every
 * conversation's agent fires, and matched to the chat that owns the session; `command:<name>` and
 * `session:reset` come from the router's observer, which sees every authorized message. Events of
 * sessions no chat owns (subagents, the API server, webhooks) are not gateway events and are skipped.
 */
import type { HookBus, HookEventName, HookHandler, HookSessionInfo } from "../../agent/hooks.js";
import type { CommandRegistry } from "../../commands/index.js";
import type { RouterObserver } from "../messaging/observer.js";
import type { MessageSource } from "../platforms/types.js";
import type { GatewayHooks } from "./registry.js";

/** A chat's session as the bridge needs it: its id changes in place on `/new`. */
interface OwnedChat {
  chat: { readonly id: string };
  source: MessageSource;
  key: string;
}

const SOURCE = "gateway-hooks";

export class GatewayHookBridge {
  private readonly chats = new Map<string, OwnedChat>();
  private readonly unregister: Array<() => void> = [];

  constructor(private readonly hooks: GatewayHooks) {}

  /** The router opened `chat` for conversation `key`. */
  track(key: string, source: MessageSource, chat: { readonly id: string }): void {
    this.chats.set(key, { chat, source, key });
  }

  private owner(sessionId: string): OwnedChat | undefined {
    for (const owned of this.chats.values()) if (owned.chat.id === sessionId) return owned;
    return undefined;
  }

  private base(owned: OwnedChat, info: HookSessionInfo): Record<string, unknown> {
    return {
      platform: owned.source.platform,
      user_id: owned.source.userId ?? null,
      chat_id: owned.source.chatId,
      session_id: info.session_id,
      session_key: owned.key,
    };
  }

  /**
   * Registers on `bus` only the agent events some hook wants (a bus event with no handler costs
   * nothing). Handlers return nothing and never wait for the hooks.
   */
  attach(bus: HookBus): void {
    const want = (e: string) => this.hooks.wants(e);
    const on = <E extends HookEventName>(event: E, handler: HookHandler<E>) =>
      this.unregister.push(bus.register(event, handler, { source: SOURCE }));
    if (want("session:start"))
      on("on_session_start", (p) => {
        const owned = this.owner(p.session_id);
        if (owned) this.hooks.emit("session:start", this.base(owned, p));
      });
    if (want("session:end"))
      on("on_session_end", (p) => {
        const owned = this.owner(p.session_id);
        if (owned) this.hooks.emit("session:end", { ...this.base(owned, p), reason: p.reason });
      });
    if (want("agent:start"))
      on("pre_llm_call", (p) => {
        const owned = this.owner(p.session_id);
        if (owned) this.hooks.emit("agent:start", { ...this.base(owned, p), message: p.user_message });
        return undefined;
      });
    // Once per iteration of the tool-calling loop (as upstream): the model call that asked for
    // tools, with all of them; a final answer is agent:end's.
    if (want("agent:step"))
      on("post_api_request", (p) => {
        const owned = this.owner(p.session_id);
        if (!owned || p.tool_names.length === 0) return;
        this.hooks.emit("agent:step", {
          ...this.base(owned, p),
          iteration: p.api_call_count,
          tool_names: [...p.tool_names],
        });
      });
    if (want("agent:end"))
      on("post_llm_call", (p) => {
        const owned = this.owner(p.session_id);
        if (owned)
          this.hooks.emit("agent:end", {
            ...this.base(owned, p),
            message: p.user_message,
            response: p.assistant_response,
            reason: p.reason,
          });
      });
  }

  detach(): void {
    for (const off of this.unregister.splice(0)) off();
  }

  /**
   * The router's observer, plus `command:<name>` (and `session:reset` for `/new` and `/reset`) for
   * each authorized message that is a known slash command.
   */
  observe(inner: RouterObserver | undefined, commands: CommandRegistry): RouterObserver {
    const hooks = this.hooks;
    return {
      message(direction, chat, text, details) {
        inner?.message(direction, chat, text, details);
        if (direction !== "in" || !text.startsWith("/")) return;
        const parsed = commands.parse(text, "chat");
        if (parsed.kind !== "command") return;
        const name = parsed.command.name;
        const context = {
          platform: chat.platform,
          user_id: chat.userId ?? null,
          chat_id: chat.chatId,
          session_key: details.sessionKey ?? null,
          command: name,
          args: parsed.args,
        };
        hooks.emit(`command:${name}`, context);
        if (name === "new" || name === "reset")
          hooks.emit("session:reset", {
            platform: chat.platform,
            user_id: chat.userId ?? null,
            session_key: details.sessionKey ?? null,
          });
      },
      turn: (key, chat, running) => inner?.turn(key, chat, running),
      requested: (approval) => inner?.requested(approval),
      resolved: (approval, decision, by) => inner?.resolved(approval, decision, by),
    };
  }
}
