/**
 * Spoken replies in chats (`/voice`): each chat's mode, kept in `<home>/gateway_voice_mode.json`
 * keyed `platform:chat` as upstream's gateway keeps it (so a home moves between implementations),
 * and the voice note sent after an answer's text. The text spoken is the answer as the chat reads
 * it, redacted, with code and markdown removed and cut at a sentence when long; the speech engine
 * (`tools/media/speech`) makes Ogg/Opus; the adapter uploads it as its platform's voice note. A
 * failure never touches the text already sent: the chat gets a short note instead. Temp audio lives
 * in a private folder removed whatever happens.
 */
import { readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { VoiceControl } from "../../commands/types.js";
import type { HermesConfig } from "../../config/defaults.js";
import type { ChatSettingsRecords } from "../../state/gateway/shared-approvals.js";
import { atomicWriteFileSync } from "../../util/atomic-write.js";
import type { Logger } from "../../util/log.js";
import type {
  InboundMessage,
  MessageSource,
  OutboundTarget,
  PlatformAdapter,
  VoiceChannelWord,
  VoiceSpeech,
} from "../platforms/types.js";

export const VOICE_MODE_FILE = "gateway_voice_mode.json";

/** Upstream's modes: text only, a voice note answering a voice note, every answer spoken. */
export type ChatVoiceMode = "off" | "voice_only" | "all";
const MODES: readonly ChatVoiceMode[] = ["off", "voice_only", "all"];

/** `/voice` words in a chat and the mode each sets (`enable`/`disable`: upstream's aliases). */
const WORD_MODE: Readonly<Record<string, ChatVoiceMode>> = {
  on: "voice_only",
  enable: "voice_only",
  off: "off",
  disable: "off",
  tts: "all",
};

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
/** `/voice` words for a platform's live voice channels (see `VoiceChannelControl`). */
const CHANNEL_WORDS: readonly string[] = ["join", "channel", "leave"];
/** The longest text spoken; the engine's providers take at least this much per call. */
const MAX_SPOKEN_CHARS = 4000;

/** Platforms whose adapters cannot carry a voice note, and why. */
const NO_VOICE: Record<string, string> = {
  homeassistant: "Home Assistant notifications cannot carry audio, so answers stay text.",
  email: "Email has no voice notes: the audio would arrive as an attachment.",
  sms: "SMS carries audio only as MMS through a public URL (SMS_WEBHOOK_PUBLIC_URL).",
};

const section = (value: unknown): Record<string, unknown> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/**
 * The words a voice should say for `markdown`: fenced and inline code, `MEDIA:` lines, link
 * targets, emphasis, headings, list and quote marks removed; whitespace joined. Longer than
 * `limit`: cut at the last sentence end before it (else the last word), with an ellipsis.
 */
export function speechText(markdown: string, limit = MAX_SPOKEN_CHARS): string {
  // Only the start can be spoken: a huge answer is not scanned whole, and no pattern looks far.
  const text = markdown
    .slice(0, limit * 20)
    .replace(/```[\s\S]*?(```|$)/g, " ")
    .replace(/`[^`\n]*`/g, " ")
    .replace(/^[ \t]*MEDIA:\S.*$/gm, " ")
    .replace(/\[\[[a-z_]+\]\]/g, " ")
    .replace(/!\[([^\]\n]{0,300})\]\([^)\s]{0,2000}\)/g, "$1")
    .replace(/\[([^\]\n]{0,300})\]\([^)\s]{0,2000}\)/g, "$1")
    .replace(/<(https?:\/\/[^>\s]{1,2000})>/g, "$1")
    .replace(/^\s{0,3}#{1,6}\s+/gm, "")
    .replace(/^\s{0,3}>\s?/gm, "")
    .replace(/^[ \t]*(?:[-*+]|\d+[.)])[ \t]+/gm, "")
    .replace(/^[ \t]*(?:[-*_][ \t]*){3,}$/gm, " ")
    .replace(/\|/g, " ")
    .replace(/(?<![\w])_([^_\n]+)_(?![\w])/g, "$1")
    .replace(/(\*\*|__|~~|\*)/g, "")
    .replace(/\s+/g, " ")
    .trim();
  if (text.length <= limit) return text;
  const head = text.slice(0, limit);
  const ends = [...head.matchAll(/[.!?\u2026](?=\s|$)/g)];
  const last = ends.at(-1);
  if (last?.index !== undefined && last.index >= limit / 3) return head.slice(0, last.index + 1);
  const space = head.lastIndexOf(" ");
  return `${(space > limit / 3 ? head.slice(0, space) : head).trimEnd()}…`;
}

/** Whether a batch of messages carried speech (a voice note or an audio file). */
export function spokenInput(batch: readonly InboundMessage[]): boolean {
  return batch.some((m) => m.media?.some((media) => media.kind === "voice" || media.kind === "audio"));
}

export interface VoiceRepliesOptions {
  home: string;
  config: HermesConfig;
  env: Readonly<Record<string, string | undefined>>;
  /** Problems, one line each (the gateway's stderr). */
  log?: ((line: string) => void) | undefined;
  /** The home's logs: problems as WARNING under `gateway.<platform>`. */
  logger?: Logger | undefined;
  /** Several instances: each chat's mode is kept in the database too, and read from it before use. */
  chatSettings?: ChatSettingsRecords | undefined;
}

const perGateway = new WeakMap<VoiceRepliesOptions, VoiceReplies>();

/** The spoken replies of the gateway these options describe (one store per gateway). */
export function voiceReplies(options: VoiceRepliesOptions): VoiceReplies {
  let voice = perGateway.get(options);
  if (!voice) {
    voice = new VoiceReplies(options);
    perGateway.set(options, voice);
  }
  return voice;
}

/** The gateway's spoken replies: every chat's mode, and the voice note after an answer. */
export class VoiceReplies {
  private readonly modes: Map<string, ChatVoiceMode>;
  private readonly file: string;

  constructor(private readonly options: VoiceRepliesOptions) {
    this.file = join(options.home, VOICE_MODE_FILE);
    this.modes = loadModes(this.file, (l) => this.log(l));
  }

  private log(line: string, platform?: string): void {
    this.options.log?.(line);
    this.options.logger?.child({ component: platform ? `gateway.${platform}` : "gateway" }).warning(line);
  }

  /** The chat's key among the modes (`platform:chat_id`, as upstream's file keys them). */
  chatKey(source: MessageSource): string {
    return `${source.platform}:${source.chatId}`;
  }

  /** A chat's mode: what `/voice` chose there, else `voice.auto_tts` (true: answer voice with voice). */
  mode(source: MessageSource): ChatVoiceMode {
    const chosen = this.modes.get(this.chatKey(source));
    if (chosen) return chosen;
    return section(this.options.config["voice"])["auto_tts"] === true ? "voice_only" : "off";
  }

  setMode(source: MessageSource, mode: ChatVoiceMode): void {
    this.modes.set(this.chatKey(source), mode);
    try {
      const data = Object.fromEntries([...this.modes].sort(([a], [b]) => a.localeCompare(b)));
      atomicWriteFileSync(this.file, `${JSON.stringify(data, null, 2)}\n`);
    } catch (error) {
      this.log(`voice: could not save ${this.file}: ${describe(error)}`, source.platform);
    }
  }

  /** A mode another instance stored for the chat (read with its other settings); others are ignored. */
  apply(source: MessageSource, mode: string | undefined): void {
    if (MODES.includes(mode as ChatVoiceMode)) this.modes.set(this.chatKey(source), mode as ChatVoiceMode);
  }

  /** Takes the chat's mode another instance stored (nothing to do with one instance). */
  async sync(source: MessageSource): Promise<void> {
    const shared = this.options.chatSettings;
    if (!shared) return;
    try {
      const stored = await shared.voiceMode(this.chatKey(source));
      if (MODES.includes(stored as ChatVoiceMode))
        this.modes.set(this.chatKey(source), stored as ChatVoiceMode);
    } catch (error) {
      this.log(
        `voice: could not read this chat's mode from the database: ${describe(error)}`,
        source.platform,
      );
    }
  }

  /** Stores the chat's new mode for the other instances; the problem's line when that failed. */
  private async share(source: MessageSource, mode: ChatVoiceMode): Promise<string | null> {
    const shared = this.options.chatSettings;
    if (!shared) return null;
    try {
      await shared.setVoiceMode(this.chatKey(source), mode);
      return null;
    } catch (error) {
      this.log(`voice: could not share this chat's mode: ${describe(error)}`, source.platform);
      return `⚠️ This holds on this instance only: could not share it with the other instances (${describe(error)}).`;
    }
  }

  /** Why `adapter`'s platform cannot carry voice notes; null when it can. */
  unsupported(adapter: PlatformAdapter): string | null {
    if (NO_VOICE[adapter.platform]) return NO_VOICE[adapter.platform] ?? null;
    return adapter.capabilities.media
      ? null
      : `${adapter.platform} takes no attachments, so answers stay text.`;
  }

  /** `/voice on|off|tts|status` (and `enable`/`disable`) in one chat: the lines to answer with. */
  control(adapter: PlatformAdapter, source: MessageSource): VoiceControl {
    const live = adapter.voiceChannels;
    return {
      extraWords: ["enable", "disable", ...(live ? CHANNEL_WORDS : [])],
      run: async (word, rest) => {
        if (live && CHANNEL_WORDS.includes(word as VoiceChannelWord))
          return live.run(word as VoiceChannelWord, source, rest, this.speech(adapter.platform));
        const mode = WORD_MODE[word];
        if (mode) {
          this.setMode(source, mode);
          const unshared = await this.share(source, mode);
          const problem = mode === "off" ? null : this.unsupported(adapter);
          return [SET_REPLY[mode], ...(problem ? [`⚠️ ${problem}`] : []), ...(unshared ? [unshared] : [])];
        }
        await this.sync(source);
        const now = this.mode(source);
        const problem = this.unsupported(adapter);
        return [
          `Voice mode: ${MODE_LABEL[now]}.`,
          ...(problem ? [`⚠️ ${problem}`] : []),
          ...(now === "off" ? ["Use /voice on, /voice tts or /voice off."] : []),
        ];
      },
    };
  }

  /**
   * The voice note to send after an answer in this chat, or undefined when none is due (the mode,
   * the platform, or what the user sent says no). It gets the answer's redacted text.
   */
  speaker(
    adapter: PlatformAdapter,
    source: MessageSource,
    batch: readonly InboundMessage[],
    target: OutboundTarget,
  ): ((text: string) => Promise<void>) | undefined {
    // A voice channel's conversation is answered aloud in the channel, whatever the chat's mode.
    const live = adapter.voiceChannels?.speaker(source);
    if (live) return (text) => live(speechText(text));
    const mode = this.mode(source);
    if (mode === "off" || (mode === "voice_only" && !spokenInput(batch))) return undefined;
    if (this.unsupported(adapter)) return undefined;
    return (text) => this.speak(adapter, target, text);
  }

  /** The speech engine as a voice channel uses it: this gateway's config, env and home. */
  speech(platform: string): VoiceSpeech {
    const { config, env, home } = this.options;
    const log = (line: string) => this.log(`voice: ${line}`, platform);
    return {
      transcribe: async (file, signal) => {
        const { transcribe } = await import("../../tools/media/speech/index.js");
        return (await transcribe(file, { config, env, home, signal, log })).text;
      },
      synthesize: async (text, outputPath, signal) => {
        const { synthesize } = await import("../../tools/media/speech/index.js");
        await synthesize(text, { config, env, home, signal, log, outputPath });
      },
    };
  }

  /** Speaks `text` and sends it as a voice note; on failure the chat gets a short note. */
  async speak(adapter: PlatformAdapter, target: OutboundTarget, text: string): Promise<void> {
    const words = speechText(text);
    if (!words) return;
    let dir: string | undefined;
    let failure: unknown;
    try {
      dir = await mkdtemp(join(tmpdir(), "hermes-voice-reply-"));
      const { synthesize } = await import("../../tools/media/speech/index.js");
      const { config, env, home } = this.options;
      const result = await synthesize(words, {
        config,
        env,
        home,
        outputPath: join(dir, "reply.ogg"),
        log: (line) => this.log(`voice: ${line}`, adapter.platform),
      });
      if ((await readFile(result.path)).length === 0) throw new Error("the speech engine wrote no audio");
      await adapter.sendMedia(target, { kind: "voice", path: result.path });
    } catch (error) {
      failure = error;
    } finally {
      // Removed before the chat hears of a failure: nothing of the audio outlives this call.
      if (dir) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
    if (failure === undefined) return;
    this.log(`${adapter.platform}: voice reply failed: ${describe(failure)}`, adapter.platform);
    await adapter
      .send(target, `🔇 No voice note this time (${shortReason(failure)}); the text above is the answer.`, {
        plain: true,
      })
      .catch(() => undefined);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The first line of a failure, short enough for a chat note. */
function shortReason(error: unknown): string {
  const line = describe(error).split("\n")[0]?.trim() || "speech failed";
  return line.length > 160 ? `${line.slice(0, 157)}…` : line;
}

/** The stored modes; a missing or broken file is an empty store (a broken one is logged). */
function loadModes(file: string, log: (line: string) => void): Map<string, ChatVoiceMode> {
  const modes = new Map<string, ChatVoiceMode>();
  let raw: string;
  try {
    raw = readFileSync(file, "utf8");
  } catch {
    return modes;
  }
  try {
    const data = JSON.parse(raw) as unknown;
    for (const [key, mode] of Object.entries(section(data))) {
      // Upstream's oldest files had unprefixed chat ids; those cannot be placed on a platform.
      if (key.includes(":") && MODES.includes(mode as ChatVoiceMode)) modes.set(key, mode as ChatVoiceMode);
    }
  } catch (error) {
    log(`voice: ignoring ${file}: ${describe(error)}`);
  }
  return modes;
}
