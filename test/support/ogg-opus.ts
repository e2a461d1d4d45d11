/** What ffprobe says about an audio file: its container, codec and length (for voice-note checks). */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface AudioProbe {
  container: string;
  codec: string;
  seconds: number;
}

/** Probes `bytes` (written to a temp file that is removed again) with ffprobe. */
export function probeAudio(bytes: Buffer): AudioProbe {
  const dir = mkdtempSync(join(tmpdir(), "probe-audio-"));
  try {
    const file = join(dir, "audio");
    writeFileSync(file, bytes);
    const run = spawnSync(
      "ffprobe",
      ["-v", "error", "-show_entries", "format=format_name,duration:stream=codec_name", "-of", "json", file],
      { encoding: "utf8" },
    );
    if (run.status !== 0) throw new Error(`ffprobe refused the audio: ${run.stderr}`);
    const data = JSON.parse(run.stdout) as {
      format?: { format_name?: string; duration?: string };
      streams?: Array<{ codec_name?: string }>;
    };
    return {
      container: data.format?.format_name ?? "",
      codec: data.streams?.[0]?.codec_name ?? "",
      seconds: Number(data.format?.duration ?? 0),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
