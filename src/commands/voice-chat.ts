/**
 * `/voice` in a chat: whether this chat's answers also arrive as voice notes, kept per chat
 * across restarts (as upstream's gateway does). `on` answers voice notes with a voice note, `tts`
 * speaks every answer, `off` is text only, `status` tells the mode; a bare `/voice` switches
 * between on and off. The gateway keeps the mode and speaks the replies (`ctx.chat.voice`).
 */
import type { ChatVoiceMode, CommandContext, CommandDef } from "./types.js";

const MODE_LABEL: Record<ChatVoiceMode, string> = {
  off: "off: text replies only",
  voice_only: "on: a voice note you send is answered with a voice note as well as text",
  all: "tts: every answer also comes as a voice note",
};

const SET_REPLY: Record<ChatVoiceMode, string> = {
  off: "🔇 Voice replies are off: answers come as text only.",
  voice_only: "🎙️ Voice replies are on: when you send a voice note, the answer also comes as a voice note.",
  all: "🔊 Spoken replies are on: every answer also comes as a voice note.",
};

const WORDS: Record<string, ChatVoiceMode> = {
  on: "voice_only",
  enable: "voice_only",
  off: "off",
  disable: "off",
  tts: "all",
};

const USAGE = "Use /voice on, /voice tts, /voice off or /voice status.";

/** Runs `/voice <args>` in a chat. */
export function runChatVoice(args: string, ctx: CommandContext): void {
  const voice = ctx.chat?.voice;
  if (!voice) throw new Error("Voice replies are not available in this chat.");
  const word = args.trim().toLowerCase();
  if (word === "status") {
    const problem = voice.unsupported();
    ctx.reply(
      `Voice mode: ${MODE_LABEL[voice.mode()]}.`,
      ...(problem ? [`⚠️ ${problem}`] : []),
      ...(voice.mode() === "off" ? [USAGE] : []),
    );
    return;
  }
  if (["join", "channel", "leave"].includes(word)) {
    ctx.reply("Discord voice channels are not available in Hermes-TS; voice notes work in every chat.");
    return;
  }
  const mode = word === "" ? (voice.mode() === "off" ? "voice_only" : "off") : WORDS[word];
  if (!mode) {
    ctx.reply(`Unknown /voice option "${word}". ${USAGE}`);
    return;
  }
  voice.setMode(mode);
  const problem = mode === "off" ? null : voice.unsupported();
  ctx.reply(SET_REPLY[mode], ...(problem ? [`⚠️ ${problem}`] : []), ...(word === "" ? [USAGE] : []));
}

/**
 * The chat side of `/voice` as a registry entry. Where the REPL's `/voice` entry exists it calls
 * `runChatVoice` for the chat surface instead, and this entry is not registered.
 */
export const VOICE_CHAT_COMMAND: CommandDef = {
  name: "voice",
  args: "[on|off|tts|status]",
  description: "voice replies in this chat: on (to voice notes), tts (every answer), off, status",
  category: "Settings",
  surfaces: "chat",
  availableWhileRunning: true,
  completeArgs: (prefix) => ["on", "off", "tts", "status"].filter((w) => w.startsWith(prefix)),
  run: runChatVoice,
};
