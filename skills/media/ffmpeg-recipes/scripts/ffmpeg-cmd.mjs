#!/usr/bin/env node
// Builds (prints, never runs) an ffmpeg command for a common recipe, so the command that runs is
// one line anyone can read and approve. The output file is never overwritten unless --overwrite.
//
// usage: node ffmpeg-cmd.mjs RECIPE INPUT OUTPUT [options]
//   trim      --start T [--duration D | --end T] [--fast]   cut a part (T: seconds or HH:MM:SS)
//   audio     [--bitrate 192k]                             extract or convert audio (codec from OUTPUT's extension)
//   convert                                                change container/codec by extension
//   compress  [--crf 28] [--max-width 1280]                smaller H.264 MP4
//   gif       [--fps 12] [--width 480] [--start T] [--duration D]
//   thumbnail [--at T]                                     one frame as an image
//   common: --overwrite (replace OUTPUT), --mute (drop audio; video recipes)
import { extname, resolve } from "node:path";

const RECIPES = ["trim", "audio", "convert", "compress", "gif", "thumbnail"];
const [recipe, input, output, ...rest] = process.argv.slice(2);

function fail(message) {
  console.error(`ffmpeg-cmd: ${message}`);
  process.exit(2);
}
if (!recipe || recipe === "-h" || recipe === "--help") {
  console.log(`usage: node ffmpeg-cmd.mjs RECIPE INPUT OUTPUT [options]; RECIPE: ${RECIPES.join(", ")}`);
  process.exit(recipe ? 0 : 2);
}
if (!RECIPES.includes(recipe)) fail(`unknown recipe "${recipe}" (${RECIPES.join(", ")})`);
if (!input || !output) fail("INPUT and OUTPUT are required");
if (resolve(input) === resolve(output)) fail("OUTPUT must differ from INPUT (ffmpeg cannot edit in place)");

const opts = {};
const FLAGS = new Set(["fast", "overwrite", "mute"]);
for (let i = 0; i < rest.length; i++) {
  const a = rest[i];
  if (!a.startsWith("--")) fail(`unexpected argument: ${a}`);
  const key = a.slice(2);
  if (FLAGS.has(key)) opts[key] = true;
  else {
    const v = rest[++i];
    if (v === undefined) fail(`${a} needs a value`);
    opts[key] = v;
  }
}
const TIME = /^(?:\d+(?:\.\d+)?|\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/;
for (const k of ["start", "end", "duration", "at"]) {
  if (opts[k] !== undefined && !TIME.test(opts[k])) fail(`--${k} must be seconds or HH:MM:SS, got "${opts[k]}"`);
}
function seconds(time) {
  return time.split(":").reduce((total, part) => total * 60 + Number(part), 0);
}
const NUMBER = /^\d+$/;
for (const k of ["crf", "max-width", "fps", "width"]) {
  if (opts[k] !== undefined && !NUMBER.test(opts[k])) fail(`--${k} must be a whole number`);
}
if (opts.bitrate !== undefined && !/^\d+k$/.test(opts.bitrate)) fail("--bitrate looks like 192k");

const ext = extname(output).toLowerCase();
const AUDIO_CODECS = {
  ".mp3": ["-c:a", "libmp3lame"],
  ".m4a": ["-c:a", "aac"],
  ".aac": ["-c:a", "aac"],
  ".opus": ["-c:a", "libopus"],
  ".ogg": ["-c:a", "libvorbis"],
  ".flac": ["-c:a", "flac"],
  ".wav": ["-c:a", "pcm_s16le"],
};
const VIDEO_MP4 = ["-c:v", "libx264", "-preset", "medium", "-crf", "23", "-pix_fmt", "yuv420p"];

const cmd = ["ffmpeg", "-hide_banner", opts.overwrite ? "-y" : "-n"];
const audioOut = () => {
  const codec = AUDIO_CODECS[ext];
  if (!codec) return [];
  const lossy = ![".flac", ".wav"].includes(ext);
  return [...codec, ...(lossy ? ["-b:a", opts.bitrate ?? "192k"] : [])];
};
const mute = () => (opts.mute ? ["-an"] : []);

switch (recipe) {
  case "trim": {
    if (!opts.start) fail("trim needs --start");
    if (!opts.duration && !opts.end) fail("trim needs --duration or --end");
    cmd.push("-ss", opts.start, "-i", input);
    if (opts.duration) cmd.push("-t", opts.duration);
    else {
      const length = seconds(opts.end) - seconds(opts.start);
      if (!(length > 0)) fail("--end must come after --start");
      cmd.push("-t", String(Math.round(length * 1000) / 1000));
    }
    if (opts.fast) cmd.push("-c", "copy");
    else if (AUDIO_CODECS[ext]) cmd.push("-vn", ...audioOut());
    else cmd.push(...VIDEO_MP4, "-c:a", "aac", "-b:a", "160k");
    cmd.push(...mute());
    break;
  }
  case "audio": {
    if (!AUDIO_CODECS[ext]) fail(`audio output must end in ${Object.keys(AUDIO_CODECS).join(", ")}`);
    cmd.push("-i", input, "-vn", ...audioOut());
    break;
  }
  case "convert": {
    cmd.push("-i", input);
    if (AUDIO_CODECS[ext]) cmd.push("-vn", ...audioOut());
    else if (ext === ".mp4" || ext === ".mov" || ext === ".mkv") {
      cmd.push(...VIDEO_MP4, "-c:a", "aac", "-b:a", "160k", ...mute());
      if (ext !== ".mkv") cmd.push("-movflags", "+faststart");
    } else if (ext === ".webm") cmd.push("-c:v", "libvpx-vp9", "-crf", "32", "-b:v", "0", "-c:a", "libopus", ...mute());
    break;
  }
  case "compress": {
    if (ext !== ".mp4") fail("compress writes an .mp4");
    const width = opts["max-width"] ?? "1280";
    cmd.push("-i", input, "-vf", `scale='min(${width},iw)':-2`, "-c:v", "libx264", "-preset", "slow");
    cmd.push("-crf", opts.crf ?? "28", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", ...mute());
    cmd.push("-movflags", "+faststart");
    break;
  }
  case "gif": {
    if (ext !== ".gif") fail("gif writes a .gif");
    if (opts.start) cmd.push("-ss", opts.start);
    if (opts.duration) cmd.push("-t", opts.duration);
    const fps = opts.fps ?? "12";
    const width = opts.width ?? "480";
    cmd.push("-i", input, "-vf", `fps=${fps},scale=${width}:-1:flags=lanczos,split[a][b];[a]palettegen[p];[b][p]paletteuse`);
    cmd.push("-loop", "0");
    break;
  }
  case "thumbnail": {
    cmd.push("-ss", opts.at ?? "1", "-i", input, "-frames:v", "1");
    if (ext === ".jpg" || ext === ".jpeg") cmd.push("-q:v", "2");
    break;
  }
}
cmd.push(output);

const quote = (word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`);
console.log(cmd.map(quote).join(" "));
