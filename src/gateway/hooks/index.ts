/**
 * The gateway's hooks in one place for the runner: loads the enabled folders (none under
 * `HERMES_SAFE_MODE`), bridges the agent events, wraps the router's observer for commands, and
 * fires `gateway:startup`. Without an enabled hook every call here is a no-op.
 */
import type { HookBus } from "../../agent/hooks.js";
import type { CommandRegistry } from "../../commands/index.js";
import { isSafeModeEnv } from "../../plugins/loader.js";
import type { RouterObserver } from "../messaging/observer.js";
import type { MessageSource } from "../platforms/types.js";
import { GatewayHookBridge } from "./bridge.js";
import { enabledGatewayHooks } from "./discover.js";
import { loadGatewayHooks } from "./registry.js";

export interface GatewayHooksHandle {
  /** The router's observer with `command:*` and `session:reset` added. */
  observer<O extends RouterObserver>(inner: O, commands: CommandRegistry): RouterObserver;
  /** Tell the hooks which chat owns a session (call when the router opens one). */
  track(key: string, source: MessageSource, chat: { readonly id: string }): void;
  startup(platforms: readonly string[]): void;
  /** Unhooks from the bus and waits (bounded by each handler's timeout) for running handlers. */
  stop(): Promise<void>;
}

const NONE: GatewayHooksHandle = {
  observer: (inner) => inner,
  track: () => undefined,
  startup: () => undefined,
  stop: async () => undefined,
};

export function startGatewayHooks(options: {
  home: string;
  config: Record<string, unknown>;
  env: Readonly<Record<string, string | undefined>>;
  bus: HookBus;
  warn: (message: string) => void;
}): GatewayHooksHandle {
  if (enabledGatewayHooks(options.config).length === 0 || isSafeModeEnv(options.env)) return NONE;
  const { hooks } = loadGatewayHooks({
    home: options.home,
    config: options.config,
    warn: (m) => options.warn(`hooks: ${m}`),
  });
  if (hooks.size === 0) return NONE;
  const bridge = new GatewayHookBridge(hooks);
  bridge.attach(options.bus);
  return {
    observer: (inner, commands) => bridge.observe(inner, commands),
    track: (key, source, chat) => bridge.track(key, source, chat),
    startup: (platforms) => hooks.emit("gateway:startup", { platforms: [...platforms] }),
    stop: async () => {
      bridge.detach();
      await hooks.settled();
    },
  };
}
