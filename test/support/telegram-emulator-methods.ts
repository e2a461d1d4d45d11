/**
 * The Bot API methods the Telegram emulator answers itself (telegram-emulator.ts routes to them),
 * validating what they are sent as Telegram does: message text and captions, reply targets,
 * inline keyboards, uploads and file ids, callback answers, chat actions and the command list.
 */
import type { ServerResponse } from "node:http";
import type { EmulatorState } from "./telegram-emulator-state.js";
import {
  CHAT_ACTIONS,
  MAX_CAPTION,
  MAX_DOWNLOAD,
  MAX_TEXT,
  MEDIA_FIELD,
  type StoredFile,
} from "./telegram-emulator-types.js";
import { getUpdates } from "./telegram-emulator-updates.js";
import { badRequest, checkMarkup, checkText, type Params, type Upload } from "./telegram-emulator-wire.js";

/** The methods (lower case) answered here; telegram-test-api's routes take some others. */
export const OWN_METHODS = new Set([
  ..."getme getupdates sendmessage editmessagetext answercallbackquery sendchataction".split(" "),
  ..."setmycommands getmycommands deletemycommands getfile".split(" "),
  ...Object.keys(MEDIA_FIELD),
]);

/** A method's result (what goes in `result`), or a thrown ApiError. */
export function handleMethod(
  state: EmulatorState,
  method: string,
  params: Params,
  uploads: Map<string, Upload>,
  res: ServerResponse,
) {
  switch (method.toLowerCase()) {
    case "getme":
      return {
        ...state.bot,
        can_join_groups: true,
        can_read_all_group_messages: false,
        supports_inline_queries: false,
      };
    case "getupdates":
      return getUpdates(state, params, res);
    case "sendmessage":
      return sendMessage(state, params);
    case "editmessagetext":
      return editMessageText(state, params);
    case "answercallbackquery": {
      const id = String(params.callback_query_id ?? "");
      if (!state.issuedQueries.has(id)) {
        throw badRequest("query is too old and response timeout expired or query ID is invalid");
      }
      state.answers.push({
        callback_query_id: id,
        ...(params.text !== undefined ? { text: String(params.text) } : {}),
        ...(params.show_alert !== undefined ? { show_alert: Boolean(params.show_alert) } : {}),
      });
      state.wake();
      return true;
    }
    case "sendchataction": {
      state.chatFor(params.chat_id);
      if (!CHAT_ACTIONS.has(String(params.action))) throw badRequest("wrong parameter action in request");
      state.actions.push({
        chat_id: String(params.chat_id),
        action: String(params.action),
        ...(params.message_thread_id !== undefined
          ? { message_thread_id: Number(params.message_thread_id) }
          : {}),
      });
      state.wake();
      return true;
    }
    case "setmycommands":
      return setMyCommands(state, params);
    case "getmycommands":
      return state.commands;
    case "deletemycommands":
      state.commands = [];
      return true;
    case "getfile": {
      const file = state.files.get(String(params.file_id ?? ""));
      if (!file) throw badRequest("invalid file_id");
      if (file.size > MAX_DOWNLOAD) throw badRequest("file is too big");
      return {
        file_id: file.fileId,
        file_unique_id: file.uniqueId,
        ...(file.unsized ? {} : { file_size: file.size }),
        file_path: file.path,
      };
    }
    default:
      if (MEDIA_FIELD[method.toLowerCase()]) return sendMedia(state, method, params, uploads);
      return undefined;
  }
}

function sendMessage(state: EmulatorState, params: Params): unknown {
  state.chatFor(params.chat_id);
  const text = String(params.text ?? "");
  checkText(text, params.parse_mode, MAX_TEXT, "message");
  checkMarkup(params.reply_markup);
  state.checkReply(params.chat_id, params);
  return state.record("sendMessage", params, { text });
}

function editMessageText(state: EmulatorState, params: Params): unknown {
  const message = state.findSent(params.chat_id, params.message_id);
  if (!message) throw badRequest("message to edit not found");
  const text = String(params.text ?? "");
  checkText(text, params.parse_mode, MAX_TEXT, "message");
  const markup = checkMarkup(params.reply_markup);
  if (
    text === message.text &&
    params.parse_mode === message.parse_mode &&
    JSON.stringify(markup) === JSON.stringify(message.reply_markup)
  ) {
    throw badRequest(
      "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
    );
  }
  message.text = text;
  message.parse_mode = params.parse_mode as string | undefined;
  message.reply_markup = markup;
  message.edits += 1;
  state.wake();
  return { ...state.botMessageObject(message), edit_date: Math.floor(Date.now() / 1000) };
}

function sendMedia(
  state: EmulatorState,
  method: string,
  params: Params,
  uploads: Map<string, Upload>,
): unknown {
  const field = MEDIA_FIELD[method.toLowerCase()] ?? "document";
  state.chatFor(params.chat_id);
  const value = params[field];
  let file: StoredFile | undefined;
  if (typeof value === "string" && value.startsWith("attach://")) {
    const upload = uploads.get(value.slice("attach://".length));
    if (!upload) throw badRequest(`there is no ${field} in the request`);
    file =
      upload.data.length === 0
        ? undefined
        : state.storeFile(upload.data, upload.filename, undefined, `${field}s`);
    if (!file) throw badRequest("file must be non-empty");
  } else if (uploads.has(field)) {
    const upload = uploads.get(field) as Upload;
    if (upload.data.length === 0) throw badRequest("file must be non-empty");
    file = state.storeFile(upload.data, upload.filename, undefined, `${field}s`);
  } else if (typeof value === "string" && state.files.has(value)) {
    file = state.files.get(value);
  } else if (value === undefined) {
    throw badRequest(`there is no ${field} in the request`);
  } else {
    throw badRequest("wrong file identifier/HTTP URL specified");
  }
  if (!file) throw badRequest(`there is no ${field} in the request`);
  const caption = params.caption === undefined ? undefined : String(params.caption);
  if (caption !== undefined) checkText(caption, params.parse_mode, MAX_CAPTION, "caption");
  checkMarkup(params.reply_markup);
  state.checkReply(params.chat_id, params);
  const result = state.record(method, params, {
    caption,
    file: { fileId: file.fileId, fileName: file.fileName, mimeType: file.mimeType, bytes: file.bytes },
  });
  const described = { file_id: file.fileId, file_unique_id: file.uniqueId, file_size: file.size };
  const named = { ...described, ...(file.fileName ? { file_name: file.fileName } : {}) };
  const media: Record<string, unknown> = {
    photo: [{ ...described, width: 1280, height: 720 }],
    document: named,
    voice: { ...described, duration: 1 },
    audio: { ...named, duration: 1 },
    video: { ...named, width: 1280, height: 720, duration: 1 },
  };
  return { ...result, [field]: media[field] };
}

function setMyCommands(state: EmulatorState, params: Params): unknown {
  const list = params.commands;
  if (!Array.isArray(list)) throw badRequest('parameter "commands" is required');
  if (list.length > 100) throw badRequest("too many commands");
  for (const c of list as Array<{ command?: unknown; description?: unknown }>) {
    if (typeof c.command !== "string" || !/^[a-z0-9_]{1,32}$/.test(c.command)) {
      throw badRequest("BOT_COMMAND_INVALID");
    }
    if (typeof c.description !== "string" || c.description.length < 1 || c.description.length > 256) {
      throw badRequest("BOT_COMMAND_DESCRIPTION_INVALID");
    }
  }
  state.commands = (list as Array<{ command: string; description: string }>).map((c) => ({
    command: c.command,
    description: c.description,
  }));
  return true;
}
