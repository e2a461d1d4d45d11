/**
 * text_to_speech: speaks text into an audio file and returns its path with a `MEDIA:` tag, so a
 * messaging gateway sends it as audio (an .ogg file as a voice note).
 *
 * The speech engine (speech/synthesize.ts) does the speaking through the `tts.*` provider chain:
 * upstream's free default `edge` (Microsoft's read-aloud voices, no key), OpenAI, ElevenLabs,
 * espeak-ng and `tts.providers.<name>` command providers (piper runs that way), each failing one
 * falling back to the next. This file owns what is particular to the tool: the model-chosen output
 * path (protected-path guard, symlinks written through), markdown stripped before speaking, and the
 * per-call length limit of the first provider.
 */
import { lstat, mkdir } from "node:fs/promises";
import { dirname, extname, join, sep } from "node:path";
import { Type } from "@sinclair/typebox";
import { resolvePath } from "../../util/abs-path.js";
import { realPathOf } from "../approval/protected-paths.js";
import { guardWrite } from "../file/write-guard.js";
import { defineTool } from "../types.js";
import { type Env, homeDir, timestampedName, toolEnv } from "./shared.js";
import { AUDIO_FORMATS, type AudioFormat } from "./speech/common.js";
import { planTts, synthesize, ttsAvailable } from "./speech/synthesize.js";
import { ttsMaxChars } from "./speech/tts-providers.js";
import description from "./tts.md";

export type TtsChoice = { provider: string; chain: string[] } | { error: string };

/** Which provider speaks first and what follows it (see speech/synthesize.ts); never throws. */
export function chooseTtsProvider(config: unknown, env: Env): TtsChoice {
  try {
    const { chain } = planTts(config, env);
    return { provider: chain[0] ?? "edge", chain };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const parameters = Type.Object({
  text: Type.String({ minLength: 1, description: "What to say." }),
  output_path: Type.Optional(
    Type.String({
      description: "Output file (.mp3 default, .ogg, .wav, .flac).",
    }),
  ),
});

export const textToSpeechTool = defineTool({
  name: "text_to_speech",
  toolset: "tts",
  description,
  parameters,
  parallelSafe: false,
  emoji: "🔊",
  check(ctx) {
    return ttsAvailable(ctx.config, ctx.env);
  },
  async handler(args, ctx) {
    const env = toolEnv(ctx);
    const choice = chooseTtsProvider(ctx.config, env);
    if ("error" in choice) throw new Error(choice.error);
    const text = spokenText(args.text);
    if (!text) throw new Error("There is no speakable text once markdown is removed.");
    const limit = ttsMaxChars(choice.provider, ctx.config);
    if (text.length > limit) {
      throw new Error(
        `The text is ${text.length} characters; ${choice.provider} takes at most ${limit} per call. Split it into several text_to_speech calls.`,
      );
    }
    const target = outputTarget(args.output_path, ctx.cwd, ctx.home);
    let { path } = target;
    if (args.output_path) {
      // A model-chosen path goes through the protected-path guard like write_file, and a symlink
      // there is written through (the rename of the atomic write would otherwise replace the link).
      await guardWrite(ctx, path, "text_to_speech");
      if ((await lstat(path).catch(() => undefined))?.isSymbolicLink()) path = realPathOf(path);
    }
    await mkdir(dirname(path), { recursive: true });
    ctx.progress(`speaking with ${choice.provider}`);
    const result = await synthesize(text, {
      config: ctx.config,
      env,
      home: ctx.home,
      signal: ctx.signal,
      outputPath: path,
      // Only a path Hermes picked may change extension (WAV when ffmpeg is missing).
      allowOtherFormat: !args.output_path,
    });
    const notes: string[] = [];
    if (result.attempts.length > 0) {
      const failed = result.attempts.map((a) => `${a.provider} (${a.error})`).join(", ");
      notes.push(`${failed} failed; spoken with ${result.provider} instead.`);
    }
    if (result.format !== target.format)
      notes.push(`ffmpeg is not installed, so the audio is ${result.format.toUpperCase()}.`);
    return {
      success: true,
      file_path: result.path,
      // Opus in Ogg is what chat apps play as a voice note; other formats go as audio files.
      media_tag: `${result.voiceCompatible ? "[[audio_as_voice]]\n" : ""}MEDIA:${result.path}`,
      provider: result.provider,
      voice_compatible: result.voiceCompatible,
      ...(notes.length ? { note: notes.join(" ") } : {}),
    };
  },
});

/** Markdown a voice should not read aloud (emphasis, code fences, link targets, headings) removed. */
export function spokenText(text: string): string {
  return text
    .replace(/```[a-z0-9_-]*\n?/gi, "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/^#{1,6}\s+/gm, "")
    .replace(/(\*\*|__|\*|`|~~)/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

function outputTarget(
  requested: string | undefined,
  cwd: string,
  home: string,
): { path: string; format: AudioFormat } {
  if (!requested?.trim()) {
    return {
      path: join(homeDir(home, join("cache", "audio"), "audio_cache"), timestampedName("tts", "mp3")),
      format: "mp3",
    };
  }
  if (requested.split(/[\\/]/).includes("..")) {
    throw new Error(
      `output_path "${requested}" contains "..": give an absolute path or one inside the working directory.`,
    );
  }
  const path = resolvePath(requested.trim(), cwd);
  if (path.endsWith(sep))
    throw new Error(`output_path "${requested}" is a folder; name a file such as reply.mp3.`);
  const ext = extname(path).slice(1).toLowerCase();
  const format = (ext === "opus" ? "ogg" : ext) as AudioFormat;
  if (!AUDIO_FORMATS.includes(format)) {
    throw new Error(`output_path "${requested}" must end in .mp3, .ogg, .wav or .flac.`);
  }
  return { path, format };
}
