/**
 * The REST side of the fake Discord (fake-discord.ts): reading a call's body (JSON or multipart
 * with `payload_json`), answering it from the fake's state as API v10 does, and the message and
 * attachment shapes the REST answers and the gateway's dispatches share.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  channelPayload,
  type DiscordCall,
  type FakeChannel,
  type FakeUser,
  type Json,
  NOT_FOUND,
  snowflake,
  TOO_LONG,
  UNKNOWN_CHANNEL,
  type UploadedFile,
  userPayload,
} from "./fake-discord-model.js";

/** What the REST routes read and change of the fake's state. */
export interface RestState {
  readonly applicationId: string;
  readonly botUser: FakeUser;
  readonly url: string;
  readonly gatewayUrl: string;
  readonly messages: Map<string, Json>;
  readonly users: Map<string, FakeUser>;
  readonly channels: Map<string, FakeChannel>;
  readonly files: Map<string, { data: Buffer; contentType: string }>;
  readonly interactions: Map<string, { token: string; answered: boolean }>;
  applicationCommands: Json[];
  dmChannel(user: FakeUser): FakeChannel;
}

/** Writes a JSON answer (no body for 204). */
export function writeJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (status === 204) res.writeHead(204, headers).end();
  else res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
}

/** A call's JSON body, or a multipart body's `payload_json` and files. */
export async function readBody(req: IncomingMessage): Promise<Pick<DiscordCall, "body" | "files">> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  if (raw.length === 0) return { body: undefined, files: [] };
  const type = req.headers["content-type"] ?? "";
  if (!type.startsWith("multipart/form-data"))
    return { body: JSON.parse(raw.toString("utf8")) as Json, files: [] };
  // Node's fetch implementation parses multipart bodies for us.
  const form = await new Response(raw, { headers: { "content-type": type } }).formData();
  const result: Pick<DiscordCall, "body" | "files"> = { body: undefined, files: [] };
  for (const [field, value] of form.entries()) {
    if (typeof value === "string") {
      if (field === "payload_json") result.body = JSON.parse(value) as Json;
      continue;
    }
    const data = Buffer.from(await value.arrayBuffer());
    result.files.push({ field, name: value.name, contentType: value.type, data });
  }
  return result;
}

/** An attachment as Discord lists it, downloadable from the fake at `path`. */
export function attachmentPayload(
  state: Pick<RestState, "url">,
  filename: string,
  size: number,
  contentType: string,
  path: string,
): Json {
  const url = `${state.url}${path}`;
  return { id: snowflake(), filename, size, content_type: contentType, url, proxy_url: url };
}

/** A message object with Discord's defaults, `fields` on top. */
export function messagePayload(fields: Json & { author: FakeUser }): Json {
  const lists = { mentions: [], mention_roles: [], attachments: [], embeds: [], components: [] };
  const base = { id: snowflake(), type: 0, content: "", timestamp: new Date().toISOString(), flags: 0 };
  const flags = { edited_timestamp: null, tts: false, mention_everyone: false, pinned: false };
  return { ...base, ...flags, ...lists, ...fields, author: userPayload(fields.author) };
}

/** Answers an authenticated REST call (path below `/api/v10`) as status and body. */
export function routeRest(
  state: RestState,
  { method, path, body, files, query }: DiscordCall,
): [number, unknown] {
  const [root, id, sub, subId, extra] = path.split("/").filter(Boolean);
  if (method === "GET" && path === "/users/@me") return [200, userPayload(state.botUser)];
  if (method === "GET" && path === "/gateway/bot") {
    const session_start_limit = { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 };
    return [200, { url: state.gatewayUrl, shards: 1, session_start_limit }];
  }
  if (method === "POST" && path === "/users/@me/channels") {
    const recipient = state.users.get(String(body?.recipient_id ?? ""));
    if (!recipient) return [400, { message: "Invalid Recipient(s)", code: 50033 }];
    return [200, channelPayload(state.dmChannel(recipient))];
  }
  if (root === "channels" && id) {
    const channel = state.channels.get(id);
    if (!channel) return [404, UNKNOWN_CHANNEL];
    if (method === "GET" && !sub) return [200, channelPayload(channel)];
    if (method === "POST" && sub === "typing" && !subId) return [204, undefined];
    if (method === "POST" && sub === "messages" && !subId)
      return createBotMessage(state, channel, body ?? {}, files);
    if (method === "PATCH" && sub === "messages" && subId && !extra) {
      const existing = state.messages.get(subId);
      if (existing?.channel_id !== channel.id) return [404, { message: "Unknown Message", code: 10008 }];
      if (typeof body?.content === "string" && body.content.length > 2000) return [400, TOO_LONG];
      const updated = { ...existing, ...body, edited_timestamp: new Date().toISOString() };
      state.messages.set(subId, updated);
      return [200, updated];
    }
  }
  if (method === "PUT" && root === "applications" && id === state.applicationId && sub === "commands") {
    const list = Array.isArray(body) ? (body as Json[]) : [];
    const bad = list.find((c) => !/^[-_\p{L}\p{N}]{1,32}$/u.test(String(c.name)) || !c.description);
    if (bad || list.length > 100) return [400, { message: "Invalid Form Body", code: 50035 }];
    state.applicationCommands = list.map((c) => ({
      ...c,
      id: snowflake(),
      application_id: state.applicationId,
    }));
    return [200, state.applicationCommands];
  }
  if (method === "POST" && root === "interactions" && id && sub && subId === "callback") {
    const interaction = state.interactions.get(id);
    if (interaction?.token !== sub) return [404, { message: "Unknown interaction", code: 10062 }];
    if (interaction.answered)
      return [400, { message: "Interaction has already been acknowledged.", code: 40060 }];
    interaction.answered = true;
    if (query.with_response !== "true") return [204, undefined];
    return [200, { interaction: { id, type: 3 }, resource: { type: body?.type } }];
  }
  if (method === "POST" && root === "webhooks" && id === state.applicationId && sub) {
    // Interaction follow-up messages.
    return [200, messagePayload({ channel_id: "0", author: state.botUser, ...(body ?? {}) })];
  }
  return [404, NOT_FOUND];
}

function createBotMessage(
  state: RestState,
  channel: FakeChannel,
  body: Json,
  files: UploadedFile[],
): [number, unknown] {
  const content = typeof body.content === "string" ? body.content : "";
  const components = Array.isArray(body.components) ? body.components : [];
  if (!content && files.length === 0 && components.length === 0) {
    return [400, { message: "Cannot send an empty message", code: 50006 }];
  }
  if (content.length > 2000) return [400, TOO_LONG];
  const reference = body.message_reference as
    | { message_id?: string; fail_if_not_exists?: boolean }
    | undefined;
  const known = reference?.message_id !== undefined && state.messages.has(reference.message_id);
  if (reference?.message_id && !known && reference.fail_if_not_exists !== false) {
    return [400, { message: "Invalid Form Body", code: 50035 }];
  }
  const id = snowflake();
  const attachments = files.map((file) => {
    const path = `/attachments/${channel.id}/${id}/${file.name}`;
    state.files.set(path, { data: file.data, contentType: file.contentType });
    return attachmentPayload(state, file.name, file.data.length, file.contentType, path);
  });
  const message = messagePayload({
    id,
    channel_id: channel.id,
    author: state.botUser,
    content,
    components,
  });
  message.attachments = attachments;
  if (known) Object.assign(message, { type: 19, message_reference: { message_id: reference?.message_id } });
  if (channel.guildId) message.guild_id = channel.guildId;
  state.messages.set(id, message);
  return [200, message];
}
