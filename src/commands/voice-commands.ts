/**
 * `/voice on|off|tts|status`: one registry entry for every surface. The command only parses the
 * word; what it does belongs to the surface's `VoiceControl` (`ctx.voice`): in the REPL
 * push-to-talk with spoken answers (cli/voice/), in a chat spoken replies (gateway side). A
 * surface without one says so and nothing else happens.
 */
import type { CommandContext, CommandDef, VoiceWord } from "./types.js";

export const VOICE_WORDS: readonly VoiceWord[] = ["on", "off", "tts", "status"];
/** Voice channel words: a surface with live voice channels (Discord) lists them in `extraWords`. */
export const VOICE_CHANNEL_WORDS: readonly string[] = ["join", "channel", "leave"];
const NO_CHANNELS =
  "Voice channels are a Discord feature: type /voice join in a Discord server's text channel while you are in one of its voice channels.";

function words(ctx: CommandContext): string[] {
  return [...VOICE_WORDS, ...(ctx.voice?.extraWords ?? [])];
}

const voiceCommand: CommandDef = {
  name: "voice",
  args: "[on|off|tts|status|join|channel|leave]",
  description:
    "voice: spoken answers (on, tts, off, status); on Discord join, channel, leave a voice channel",
  category: "Settings",
  availableWhileRunning: true,
  completeArgs: (_prefix, ctx) => words(ctx),
  async run(args, ctx) {
    const [first = "", ...restWords] = args.trim().split(/\s+/);
    const word = first.toLowerCase() || "status";
    const voice = ctx.voice;
    if (!voice) {
      ctx.reply(ctx.paint.dim("Voice mode is not available here."));
      return;
    }
    const known = words(ctx);
    if (VOICE_CHANNEL_WORDS.includes(word) && !known.includes(word)) throw new Error(NO_CHANNELS);
    if (!known.includes(word)) {
      throw new Error(
        `Unknown /voice argument "${first}": use ${known.map((w) => `/voice ${w}`).join(", ")}.`,
      );
    }
    const lines = await voice.run(word, restWords.join(" "));
    if (lines.length > 0) ctx.reply(...lines);
  },
};

export const VOICE_COMMANDS: readonly CommandDef[] = [voiceCommand];
