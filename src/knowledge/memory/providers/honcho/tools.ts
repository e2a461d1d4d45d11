/**
 * The tools the Honcho provider adds (upstream's names): `honcho_profile` (peer card),
 * `honcho_search` (search the user's past messages), `honcho_context` (session summary,
 * representation and card), `honcho_reasoning` (a dialectic question), `honcho_conclude` (write or
 * list persistent conclusions about the user). Each takes `peer`: `user` (default) or `ai`.
 */
import type { ProviderTool } from "../types.js";
import type { Bound, HonchoConnection } from "./client.js";
import type { HonchoSettings } from "./config.js";

const PEER = {
  type: "string",
  enum: ["user", "ai"],
  description: "Whose memory: the user (default) or the AI itself.",
} as const;

const SEARCH_MAX_RESULTS = 20;

function pickPeer(bound: Bound, args: Record<string, unknown>) {
  return args["peer"] === "ai" ? bound.ai : bound.user;
}

function requireText(args: Record<string, unknown>, key: string): string {
  const value = args[key];
  if (typeof value !== "string" || !value.trim()) throw new Error(`"${key}" is required: give it as text.`);
  return value.trim();
}

export function honchoTools(connection: HonchoConnection, settings: HonchoSettings): ProviderTool[] {
  return [
    {
      name: "honcho_profile",
      description:
        "Read the key facts Honcho keeps about the user (or yourself with peer=ai): a short peer card built across all past sessions. No model call.",
      parameters: { type: "object", properties: { peer: PEER }, additionalProperties: false },
      run: async (args, session) => {
        const bound = await connection.bind(session);
        const card = await pickPeer(bound, args).getCard();
        return card && card.length > 0 ? card.map((line) => `- ${line}`).join("\n") : "No peer card yet.";
      },
    },
    {
      name: "honcho_search",
      description:
        "Search what the user (or you, with peer=ai) said in past sessions stored in Honcho. Returns matching messages with their session.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", description: "What to look for." },
          limit: {
            type: "integer",
            minimum: 1,
            maximum: SEARCH_MAX_RESULTS,
            description: "At most this many (default 8).",
          },
          peer: PEER,
        },
        required: ["query"],
        additionalProperties: false,
      },
      run: async (args, session) => {
        const query = requireText(args, "query");
        const limit = Math.min(SEARCH_MAX_RESULTS, Math.max(1, Number(args["limit"] ?? 8) || 8));
        const bound = await connection.bind(session);
        const found = await pickPeer(bound, args).search(query, { limit });
        if (found.length === 0) return `Nothing found for "${query}".`;
        return found.map((m) => `[${m.sessionId}] ${m.peerId}: ${m.content}`).join("\n");
      },
    },
    {
      name: "honcho_context",
      description:
        "The Honcho context of this conversation: session summary, what Honcho concluded about the user, and the user's peer card. No model call.",
      parameters: { type: "object", properties: { peer: PEER }, additionalProperties: false },
      run: async (args, session) => {
        const bound = await connection.bind(session);
        const target = pickPeer(bound, args);
        const ctx = await bound.session.context({
          summary: true,
          peerTarget: target.id,
          peerPerspective: target.id === bound.ai.id ? bound.user.id : bound.ai.id,
          ...(settings.contextTokens ? { tokens: settings.contextTokens } : {}),
        });
        const parts = [
          ctx.summary?.content ? `## Session Summary\n${ctx.summary.content}` : "",
          ctx.peerRepresentation ? `## Representation\n${ctx.peerRepresentation}` : "",
          ctx.peerCard?.length ? `## Peer Card\n${ctx.peerCard.join("\n")}` : "",
        ].filter(Boolean);
        return parts.length > 0 ? parts.join("\n\n") : "Honcho has no context for this session yet.";
      },
    },
    {
      name: "honcho_reasoning",
      description:
        "Ask Honcho a question about the user (or yourself with peer=ai); Honcho reasons over everything it has observed and answers in prose. Costs a model call on Honcho's side.",
      parameters: {
        type: "object",
        properties: {
          query: {
            type: "string",
            description: "The question, e.g. 'How does the user like code reviewed?'",
          },
          reasoning_level: {
            type: "string",
            enum: ["minimal", "low", "medium", "high", "max"],
            description: "How hard Honcho thinks (default from honcho.json dialecticReasoningLevel).",
          },
          peer: PEER,
        },
        required: ["query"],
        additionalProperties: false,
      },
      run: async (args, session) => {
        const query = requireText(args, "query");
        const bound = await connection.bind(session);
        const level =
          typeof args["reasoning_level"] === "string"
            ? args["reasoning_level"]
            : settings.dialecticReasoningLevel;
        const answer = await pickPeer(bound, args).chat(query, {
          session: bound.session.id,
          reasoningLevel: level as "low",
        });
        return typeof answer === "string" && answer.trim()
          ? answer.trim()
          : "Honcho has no answer to that yet.";
      },
    },
    {
      name: "honcho_conclude",
      description:
        "Write a lasting conclusion about the user into Honcho (action=add, with content), or list the ones stored (action=list).",
      parameters: {
        type: "object",
        properties: {
          action: { type: "string", enum: ["add", "list"] },
          content: { type: "string", description: "With add: one self-contained fact about the user." },
        },
        required: ["action"],
        additionalProperties: false,
      },
      run: async (args, session) => {
        const bound = await connection.bind(session);
        const view = bound.ai.conclusionsOf(bound.user.id);
        if (args["action"] === "add") {
          const content = requireText(args, "content");
          const created = await view.create({ content, sessionId: bound.session.id });
          return `Saved ${created.length === 1 ? "a conclusion" : `${created.length} conclusions`} about ${bound.user.id}.`;
        }
        const page = await view.list({ size: 50 });
        const items = page.items.map((c) => `- ${c.id}: ${c.content}`);
        return items.length > 0 ? items.join("\n") : "No conclusions stored yet.";
      },
    },
  ];
}
