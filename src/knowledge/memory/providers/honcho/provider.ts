/**
 * The Honcho memory provider (`memory.provider: honcho`) over the official `@honcho-ai/sdk`.
 * Prefetch joins upstream's two layers: the base context (session summary, the user's
 * representation and peer card, refreshed every `contextCadence` turns) and the dialectic
 * supplement (`peer.chat`, every `dialecticCadence` turns, cut to `dialecticMaxChars`). Sync adds
 * the turn's two messages, split at `messageMaxChars` with `[continued]` markers.
 */

import { maskSecret } from "../../../../config/secrets.js";
import { abortable } from "../../../../util/abortable.js";
import type {
  MemoryProvider,
  ProviderContext,
  ProviderSessionInfo,
  ProviderStatus,
  ProviderTool,
  ProviderTurn,
} from "../types.js";
import { HonchoConnection, loadHonchoSdk, type SdkLoader } from "./client.js";
import {
  type HonchoSettings,
  honchoHostKey,
  isLocalBaseUrl,
  profileOfHome,
  readHonchoFile,
  resolveHonchoSettings,
} from "./config.js";
import { honchoTools } from "./tools.js";

/** Settings plus the raw host-merged data (identity-mapping keys), or why they could not be read. */
export function loadHonchoSettings(context: ProviderContext): {
  settings: HonchoSettings;
  raw: Record<string, unknown>;
  error?: string;
} {
  const host = honchoHostKey(context.env, context.profile ?? profileOfHome(context.home));
  try {
    const file = readHonchoFile(context.home, context.env);
    const settings = resolveHonchoSettings(file?.data, host, context.env, file?.path);
    const root = file?.data ?? {};
    const hosts = (root["hosts"] ?? {}) as Record<string, unknown>;
    const block = (hosts[host] && typeof hosts[host] === "object" ? hosts[host] : {}) as Record<
      string,
      unknown
    >;
    return { settings, raw: { ...root, ...block } };
  } catch (error) {
    return {
      settings: resolveHonchoSettings(undefined, host, context.env),
      raw: {},
      error: error instanceof Error ? error.message : String(error),
    };
  }
}

/** Pure: `text` cut to `max` characters at a word boundary, with an ellipsis when cut. */
export function truncateAtWord(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(" ");
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** Pure: a message split into chunks of at most `max` characters, later ones marked `[continued]`. */
export function chunkMessage(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const marker = "[continued] ";
  const chunks: string[] = [];
  let rest = text;
  let first = true;
  while (rest.length > 0) {
    const room = first ? max : max - marker.length;
    chunks.push(first ? rest.slice(0, room) : `${marker}${rest.slice(0, room)}`);
    rest = rest.slice(room);
    first = false;
  }
  return chunks;
}

const COLD_PROMPT =
  "Who is this person? What are their preferences, goals, and working style? Focus on facts that would help an AI assistant be immediately useful.";
const WARM_PROMPT =
  "Given what's been discussed in this session so far, what context about this user is most relevant to the current conversation? Prioritize active context over biographical facts.";

export class HonchoProvider implements MemoryProvider {
  readonly name = "honcho";
  readonly tools: readonly ProviderTool[];
  private readonly settings: HonchoSettings;
  private readonly loadError: string | undefined;
  private readonly connection: HonchoConnection;
  private turns = 0;
  private baseCache = "";

  constructor(context: ProviderContext, loadSdk: SdkLoader = loadHonchoSdk) {
    const loaded = loadHonchoSettings(context);
    this.settings = loaded.settings;
    this.loadError = loaded.error;
    this.connection = new HonchoConnection(loaded.settings, loaded.raw, loadSdk);
    // Upstream hides the tools in `context` mode; they are always there in `tools` and `hybrid`.
    this.tools = this.settings.recallMode === "context" ? [] : honchoTools(this.connection, this.settings);
  }

  get timeoutMs(): number {
    return this.settings.timeoutSeconds * 1000;
  }

  status(): ProviderStatus {
    const s = this.settings;
    const settings: Record<string, string> = {
      "config file": s.file ?? "none (HONCHO_* environment only)",
      host: s.host,
      workspace: s.workspace,
      "user peer": s.peerName ?? "(not set)",
      "ai peer": s.aiPeer,
      "recall mode": s.recallMode,
      "session strategy": s.sessionStrategy,
      "base url": s.baseUrl ?? "https://api.honcho.dev",
      "api key": s.apiKey ? `${maskSecret(s.apiKey)} (${s.apiKeySource})` : "(not set)",
    };
    const off = (detail: string): ProviderStatus => ({ provider: "honcho", active: false, detail, settings });
    if (this.loadError) return off(`off: ${this.loadError}`);
    if (!s.enabled && (s.apiKey || s.baseUrl))
      return off(`off: disabled in ${s.file ?? "honcho.json"} (enabled: false)`);
    if (!s.apiKey && !isLocalBaseUrl(s.baseUrl)) {
      return off(
        "off: no API key. Set HONCHO_API_KEY in .env or run `hermes memory setup honcho` (a local baseUrl needs none).",
      );
    }
    const where = s.baseUrl ?? "https://api.honcho.dev";
    return { provider: "honcho", active: true, detail: `on: workspace ${s.workspace} at ${where}`, settings };
  }

  async prefetch(query: string, session: ProviderSessionInfo, signal: AbortSignal): Promise<string> {
    if (this.settings.recallMode === "tools") return "";
    const turn = ++this.turns;
    const s = this.settings;
    const bound = await abortable(this.connection.bind(session), signal);
    const baseDue = (turn - 1) % s.contextCadence === 0 || !this.baseCache;
    const dialecticDue = (turn - 1) % s.dialecticCadence === 0;
    const [base, dialectic] = await abortable(
      Promise.all([
        baseDue
          ? bound.session
              .context({
                summary: true,
                peerTarget: bound.user.id,
                peerPerspective: bound.ai.id,
                ...(s.contextTokens ? { tokens: s.contextTokens } : {}),
              })
              .then((ctx) =>
                formatBase({
                  summary: ctx.summary?.content ?? "",
                  representation: ctx.peerRepresentation ?? "",
                  card: (ctx.peerCard ?? []).join("\n"),
                }),
              )
          : Promise.resolve(this.baseCache),
        dialecticDue
          ? bound.user
              .chat(
                `${this.baseCache ? WARM_PROMPT : COLD_PROMPT}\n\nCurrent message: ${query.slice(0, 10_000)}`,
                {
                  session: bound.session.id,
                  reasoningLevel: s.dialecticReasoningLevel as "low",
                },
              )
              .then((answer) => (typeof answer === "string" ? answer.trim() : ""))
          : Promise.resolve(""),
      ]),
      signal,
    );
    this.baseCache = base;
    const parts = [base];
    if (dialectic) parts.push(`## Dialectic\n${truncateAtWord(dialectic, s.dialecticMaxChars)}`);
    const joined = parts.filter(Boolean).join("\n\n");
    // `contextTokens` bounds the injection too (about four characters a token, as upstream).
    return s.contextTokens ? truncateAtWord(joined, s.contextTokens * 4) : joined;
  }

  async syncTurn(turn: ProviderTurn, session: ProviderSessionInfo, signal: AbortSignal): Promise<void> {
    if (!this.settings.saveMessages) return;
    const user = turn.user.trim();
    const assistant = turn.assistant.trim();
    if (!user && !assistant) return;
    const bound = await abortable(this.connection.bind(session), signal);
    const max = this.settings.messageMaxChars;
    const messages = [
      ...(user ? chunkMessage(user, max).map((c) => bound.user.message(c)) : []),
      ...(assistant ? chunkMessage(assistant, max).map((c) => bound.ai.message(c)) : []),
    ];
    await abortable(bound.session.addMessages(messages), signal);
  }

  async close(): Promise<void> {
    // The SDK keeps no open connections (fetch per request); nothing is queued here.
  }
}

function formatBase(ctx: { summary: string; representation: string; card: string }): string {
  const parts: string[] = [];
  if (ctx.summary.trim()) parts.push(`## Session Summary\n${ctx.summary.trim()}`);
  if (ctx.representation.trim()) parts.push(`## User Representation\n${ctx.representation.trim()}`);
  if (ctx.card.trim()) parts.push(`## User Peer Card\n${ctx.card.trim()}`);
  return parts.join("\n\n");
}
