/**
 * The memory providers Hermes-TS ships, by `memory.provider` name, and how config.yaml selects one.
 * Creating a provider reads its settings file and nothing else: the vendor SDK loads on first
 * network use, so an active provider costs no start-up time.
 */
import { HonchoProvider } from "./honcho/provider.js";
import type { MemoryProvider, ProviderContext, ProviderFactory } from "./types.js";

export const MEMORY_PROVIDERS: readonly ProviderFactory[] = [
  {
    name: "honcho",
    description: "Honcho (honcho.dev): cross-session user modelling, dialectic recall, peer cards",
    create: (context) => new HonchoProvider(context),
  },
];

/** `memory.provider` as written: a trimmed lower-case name, or "" for built-in only. */
export function configuredProviderName(memoryConfig: Record<string, unknown> | undefined): string {
  const value = memoryConfig?.["provider"];
  return typeof value === "string" ? value.trim().toLowerCase() : "";
}

export function findProviderFactory(name: string): ProviderFactory | undefined {
  return MEMORY_PROVIDERS.find((p) => p.name === name);
}

export type ProviderSelection =
  | { kind: "none" }
  | { kind: "unknown"; name: string; message: string }
  | { kind: "selected"; provider: MemoryProvider };

/**
 * The provider config.yaml selects: none (built-in only), an unknown name (with the message the
 * user needs), or the created provider, active or not (its `status()` says which and why).
 */
export function selectMemoryProvider(
  memoryConfig: Record<string, unknown> | undefined,
  context: ProviderContext,
): ProviderSelection {
  const name = configuredProviderName(memoryConfig);
  if (!name || name === "none" || name === "builtin") return { kind: "none" };
  const factory = findProviderFactory(name);
  if (!factory) {
    const known = MEMORY_PROVIDERS.map((p) => p.name).join(", ");
    return {
      kind: "unknown",
      name,
      message: `memory.provider "${name}" is not a provider Hermes knows (known: ${known}); only built-in memory is used. Fix it with: hermes memory setup`,
    };
  }
  return { kind: "selected", provider: factory.create(context) };
}
