/**
 * Bundled ops skills end to end through the built CLI. The fake model follows each skill the way a
 * real one would: it loads the skill with skill_view, then takes the command from the SKILL.md text
 * that skill_view returned (the shipped script's path under the `Folder:` line, the recipe syntax,
 * the verification command) and runs it with the terminal tool on a real fixture in a temp folder.
 * A skill whose instructions name a wrong path or syntax fails here, not only in review.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { type RecordedRequest, reply, type ScriptedReply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();
afterEach(() => {
  llm.respondWith(undefined);
});

type ChatMessage = { role: string; content: string | null };
const messagesOf = (request: RecordedRequest) => (request.body as { messages: ChatMessage[] }).messages;
/** The tool results so far, oldest first, a terminal result without its closing `[exit code N]` line. */
function toolResults(request: RecordedRequest): string[] {
  return messagesOf(request)
    .filter((m) => m.role === "tool")
    .map((m) => (m.content ?? "").replace(/\n?\[exit code 0\]$/, ""));
}

/** The skill folder and the SKILL.md body from a skill_view result; fails the run when absent. */
function skillFrom(viewResult: string): { folder: string; body: string } {
  const folder = /^Folder: (.+)$/m.exec(viewResult)?.[1]?.trim();
  const body = viewResult.split("\nSKILL.md:\n")[1];
  if (!folder || !body) throw new Error(`not a skill_view result: ${viewResult.slice(0, 300)}`);
  return { folder, body };
}

/** The first backticked command in the skill body that matches `pattern` (fails loudly when none). */
function commandIn(body: string, pattern: RegExp): string {
  for (const m of body.matchAll(/`([^`\n]+)`/g)) {
    const command = m[1] ?? "";
    if (pattern.test(command)) return command;
  }
  throw new Error(`the skill names no command matching ${pattern}`);
}

/**
 * A scripted agent: step 0 loads `skill`; each later step gets the tool results so far (the first
 * is the skill_view text) and returns the next reply.
 */
function followSkill(skill: string, steps: Array<(results: string[]) => ScriptedReply>): void {
  llm.respondWith((request) => {
    const results = toolResults(request);
    if (results.length === 0) return reply().toolCall("skill_view", { name: skill });
    const step = steps[results.length - 1];
    if (!step) return reply().text("(the script ran out of steps)");
    try {
      return step(results);
    } catch (error) {
      return reply().text(`SKILL FOLLOWING FAILED: ${(error as Error).message}`);
    }
  });
}

function home(): { home: string; cwd: string } {
  const h = tempHome();
  writeFileSync(join(h.home, "config.yaml"), fakeProviderConfig(llm.url));
  return h;
}

const hasFfmpeg =
  spawnSync("ffmpeg", ["-version"]).status === 0 && spawnSync("ffprobe", ["-version"]).status === 0;

describe("devops skills", () => {
  it("log-triage: the shipped script finds the one real error in a 40,000-line log", async () => {
    const h = home();
    const lines: string[] = [];
    for (let i = 0; i < 40_000; i++) {
      const t = `2026-11-26 03:${String(Math.floor(i / 1000) % 60).padStart(2, "0")}:${String(i % 60).padStart(2, "0")}`;
      lines.push(`${t} INFO  api: GET /orders/${i} 200 ${i % 37}ms`);
      // Decoys: warnings, and INFO lines that mention the word "error" in lower case.
      if (i % 500 === 0) lines.push(`${t} WARN  cache: slow lookup for order ${i}`);
      if (i % 700 === 0) lines.push(`${t} INFO  budget: error budget at 99.9%, 0 errors`);
    }
    const errorLine = "2026-11-26 03:27:41 ERROR billing: charge failed for invoice 8812: card_declined";
    const at = 27_613;
    lines.splice(at, 0, errorLine, "    at Billing.charge (billing.js:142)");
    writeFileSync(join(h.cwd, "app.log"), `${lines.join("\n")}\n`);

    followSkill("log-triage", [
      ([view = ""]) => {
        const { folder, body } = skillFrom(view);
        const command = commandIn(body, /scripts\/log-triage\.mjs FILE$/)
          .replace("<skill folder>", folder)
          .replace(/FILE$/, "app.log");
        return reply().toolCall("terminal", { command });
      },
      (results) => {
        const report = results.at(-1) ?? "";
        const first = /first error: line (\d+)[^\n]*\n(?:.*\n)*?>>> \d+: (.+)/.exec(report);
        if (!first) return reply().text(`no error reported:\n${report}`);
        return reply().text(`The first error is on line ${first[1]}: ${first[2]}`);
      },
    ]);
    const result = await runHermes(["-z", "What went wrong in app.log last night?"], h);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(`The first error is on line ${at + 1}: ${errorLine}`);
    const report = toolResults(llm.chatRequests.at(-1) as RecordedRequest).at(-1) ?? "";
    expect(report).toMatch(/error lines: 1\n/);
    expect(report).toContain("WARN 80");
  }, 30_000);

  it("disk-cleanup: the report names the biggest files and folders, and deletes nothing", async () => {
    const h = home();
    const data = join(h.cwd, "data");
    const big = join(data, "media", "2024", "holiday.mkv");
    const second = join(data, "cache", "blob.tmp");
    mkdirSync(join(data, "media", "2024"), { recursive: true });
    mkdirSync(join(data, "cache"), { recursive: true });
    mkdirSync(join(data, "docs"), { recursive: true });
    writeFileSync(big, randomBytes(6 * 1024 * 1024));
    writeFileSync(second, randomBytes(3 * 1024 * 1024));
    for (let i = 0; i < 20; i++) writeFileSync(join(data, "docs", `note-${i}.txt`), `note ${i}\n`);

    followSkill("disk-cleanup", [
      ([view = ""]) => {
        const { folder, body } = skillFrom(view);
        const command = commandIn(body, /scripts\/disk-report\.sh DIR/)
          .replace("<skill folder>", folder)
          .replace(/DIR \[TOP\] \[MIN_FILE_KIB\]$/, "data 10 1024");
        return reply().toolCall("terminal", { command });
      },
      (results) => {
        const report = results.at(-1) ?? "";
        const files = report.split("== biggest files")[1]?.split("\n").slice(1) ?? [];
        const folders = report.split("== biggest folders")[1]?.split("\n").slice(1) ?? [];
        const top = files[0]?.trim() ?? "";
        // Folders: the first row is the root itself; the next one is its biggest child.
        const topFolder = folders[1]?.trim() ?? "";
        return reply().text(`Biggest file: ${top}\nBiggest folder: ${topFolder}`);
      },
    ]);
    const result = await runHermes(["-z", "What is filling up the data folder?"], h);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Biggest file: 6\.0 MiB +data\/media\/2024\/holiday\.mkv/);
    expect(result.stdout).toMatch(/Biggest folder: 6\.0 MiB +data\/media\n/);
    const report = toolResults(llm.chatRequests.at(-1) as RecordedRequest).at(-1) ?? "";
    expect(report).toMatch(/3\.0 MiB +data\/cache\/blob\.tmp/);
    expect(report).toContain("Nothing was deleted");
    expect(existsSync(big) && existsSync(second)).toBe(true);
  }, 30_000);
});

describe("server-health", () => {
  it("server-health: the snapshot compares load with the CPU count and lists the fake LLM's listening port", async () => {
    const h = home();
    followSkill("server-health", [
      ([view = ""]) => {
        const { folder, body } = skillFrom(view);
        const command = commandIn(body, /scripts\/health-snapshot\.sh \[TOP\]$/)
          .replace("<skill folder>", folder)
          .replace("[TOP]", "5");
        return reply().toolCall("terminal", { command });
      },
      (results) => reply().text(results.at(-1) ?? ""),
    ]);
    const result = await runHermes(["-z", "Is this machine healthy?"], h);
    expect(result.code, result.stderr).toBe(0);
    const cpus = spawnSync("nproc", { encoding: "utf8" }).stdout.trim();
    expect(result.stdout).toMatch(
      new RegExp(`load: [\\d.]+ \\(1m\\) [\\d.]+ \\(5m\\) [\\d.]+ \\(15m\\) on ${cpus} CPUs`),
    );
    for (const section of [
      "memory (MiB)",
      "top CPU",
      "top memory",
      "listening TCP ports",
      "failed systemd units",
    ]) {
      expect(result.stdout).toContain(`== ${section}`);
    }
    const port = new URL(llm.url).port;
    const canList = ["ss", "lsof"].some((tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0);
    if (canList) expect(result.stdout).toMatch(new RegExp(`127\\.0\\.0\\.1:${port}\\b`));
  }, 30_000);
});

describe("backups", () => {
  it("backups: the shipped script archives a folder and proves the restore matches", async () => {
    const h = home();
    const photos = join(h.cwd, "photos");
    mkdirSync(join(photos, "2026", "summer"), { recursive: true });
    writeFileSync(join(photos, "2026", "summer", "beach.jpg"), randomBytes(200_000));
    writeFileSync(join(photos, "index.txt"), "beach.jpg: the long walk\n");
    followSkill("backups", [
      ([view = ""]) => {
        const { folder, body } = skillFrom(view);
        const command = commandIn(body, /scripts\/backup-and-verify\.sh SOURCE_DIR DEST_DIR/)
          .replace("<skill folder>", folder)
          .replace("SOURCE_DIR DEST_DIR [NAME]", "photos backups");
        return reply().toolCall("terminal", { command });
      },
      (results) => reply().text(results.at(-1) ?? ""),
    ]);
    const result = await runHermes(["-z", "Back up my photos folder and make sure it restores."], h);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("restore test: OK, every file matches the source");
    const archive = /archive: (\S+\.tar\.gz)/.exec(result.stdout)?.[1] ?? "";
    expect(archive).toMatch(/\/backups\/photos-\d{8}-\d{6}\.tar\.gz$/);
    const listing = spawnSync("tar", ["-tzf", archive], { encoding: "utf8" }).stdout;
    expect(listing).toContain("photos/2026/summer/beach.jpg");
    const check = spawnSync("sha256sum", ["-c", `${archive.split("/").pop()}.sha256`], {
      cwd: join(h.cwd, "backups"),
      encoding: "utf8",
    });
    expect(check.stdout).toMatch(/: OK/);
    expect(readFileSync(join(photos, "index.txt"), "utf8")).toBe("beach.jpg: the long walk\n");
  }, 30_000);
});

describe("mlops skills", () => {
  it("model-evaluation: the skill's collection loop and scorer rank two models on the template set", async () => {
    const h = home();
    // Stand-ins for `hermes -z -m MODEL PROMPT` inside the agent's shell: model-a knows every
    // answer in the template set, model-b misses two.
    const shims = join(h.cwd, "..", "shims");
    mkdirSync(shims, { recursive: true });
    const answers = {
      "model-a": {
        "17 * 23": "391",
        "2.5 hours": "150 minutes",
        planet: "Mercury",
        "ISO week": "2026-W53-7",
        "lines of": "wc -l file.txt",
        Invoice: "EUR 310.50",
      },
      "model-b": {
        "17 * 23": "391",
        "2.5 hours": "120",
        planet: "Venus",
        "ISO week": "2026-W53-7",
        "lines of": "wc -l < file.txt",
        Invoice: "310.50",
      },
    };
    writeFileSync(
      join(shims, "hermes"),
      `#!/usr/bin/env node
const a = process.argv.slice(2);
const model = a[a.indexOf("-m") + 1];
const prompt = a[a.length - 1];
const table = ${JSON.stringify(answers)}[model] || {};
const key = Object.keys(table).find((k) => prompt.includes(k));
console.log(key ? table[key] : "I do not know");
`,
      { mode: 0o755 },
    );
    followSkill("model-evaluation", [
      ([view = ""]) => {
        const file = commandIn(skillFrom(view).body, /^templates\/eval-set\.jsonl$/);
        return reply().toolCall("skill_view", { name: "model-evaluation", file_path: file });
      },
      ([, template = ""]) => {
        const jsonl = template.slice(template.indexOf("{"));
        return reply().toolCall("write_file", { path: "evals/my-tasks.jsonl", content: jsonl });
      },
      ([view = ""]) => {
        const { folder, body } = skillFrom(view);
        const loop = /```sh\n([\s\S]*?)```/.exec(body)?.[1] ?? "";
        const script = body.match(/`S` set to\s+`<skill folder>(\/scripts\/score-evals\.mjs)`/)?.[1];
        if (!loop || !script) throw new Error("no collection loop in the skill");
        const both = [
          loop.replace("MODEL_A", "model-a"),
          loop.replace("MODEL_A", "model-b").replace("answers-a", "answers-b"),
        ];
        return reply().toolCall("terminal", { command: `S=${folder}${script}\n${both.join("")}` });
      },
      ([view = ""]) => {
        const { folder, body } = skillFrom(view);
        const score = commandIn(body, /^node "\$S" score /);
        return reply().toolCall("terminal", { command: `S=${folder}/scripts/score-evals.mjs; ${score}` });
      },
      (results) =>
        reply().text(/^verdict: .*$/m.exec(results.at(-1) ?? "")?.[0] ?? `no verdict: ${results.at(-1)}`),
    ]);
    const result = await runHermes(["-z", "Compare model-a and model-b on my tasks."], {
      ...h,
      env: { PATH: `${shims}:${process.env.PATH ?? "/usr/bin:/bin"}` },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(
      "verdict: evals/answers-a.jsonl is ahead by 2 (with 6 cases, a difference of one or two is noise)",
    );
    const report = toolResults(llm.chatRequests.at(-1) as RecordedRequest).at(-1) ?? "";
    expect(report).toContain("evals/answers-a.jsonl: 6/6 passed (100.0%)");
    expect(report).toContain("evals/answers-b.jsonl: 4/6 passed (66.7%)");
    expect(report).toMatch(/only evals\/answers-b\.jsonl passed: none/);
    expect(
      readFileSync(join(h.cwd, "evals", "answers-b.jsonl"), "utf8")
        .trim()
        .split("\n"),
    ).toHaveLength(6);
  }, 30_000);
});

/** A valid grey PNG of the given size, with a tEXt chunk when `comment` is given. */
function png(width: number, height: number, comment?: string): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const byte of buf) c = (crcTable[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth; colour type 0 (grey), no interlace
  const rows = Buffer.alloc((width + 1) * height, 0x80);
  for (let y = 0; y < height; y++) rows[y * (width + 1)] = 0; // filter byte per row
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    ...(comment ? [chunk("tEXt", Buffer.from(`Comment\0${comment}`, "latin1"))] : []),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

describe("image skills", () => {
  it("image-recipes: the shipped reader reports sizes and which pictures still carry metadata", async () => {
    const h = home();
    mkdirSync(join(h.cwd, "shots"));
    writeFileSync(join(h.cwd, "shots", "a-tagged.png"), png(64, 48, "taken at 51.5N 0.1W"));
    writeFileSync(join(h.cwd, "shots", "b-clean.png"), png(32, 32));
    writeFileSync(join(h.cwd, "shots", "notes.txt"), "not a picture\n");
    followSkill("image-recipes", [
      ([view = ""]) => {
        const { folder, body } = skillFrom(view);
        const command = commandIn(body, /scripts\/image-info\.mjs FOLDER_OR_FILES$/)
          .replace("<skill folder>", folder)
          .replace("FOLDER_OR_FILES", "shots");
        return reply().toolCall("terminal", { command });
      },
      (results) => reply().text(results.at(-1) ?? ""),
    ]);
    const result = await runHermes(["-z", "Which of my screenshots still have metadata?"], h);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^shots\/a-tagged\.png: png 64x48, [\d.]+ KiB, metadata: tEXt$/);
    expect(lines[1]).toMatch(/^shots\/b-clean\.png: png 32x32, [\d.]+ KiB, no metadata$/);
  }, 30_000);
});

/** A mono 16-bit PCM WAV of a 440 Hz tone. */
function wav(seconds: number, rate = 8000): Buffer {
  const samples = Math.round(seconds * rate);
  const out = Buffer.alloc(44 + samples * 2);
  out.write("RIFF", 0);
  out.writeUInt32LE(36 + samples * 2, 4);
  out.write("WAVEfmt ", 8);
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(rate, 24);
  out.writeUInt32LE(rate * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write("data", 36);
  out.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++) {
    out.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), 44 + i * 2);
  }
  return out;
}

describe("media skills", () => {
  it.skipIf(!hasFfmpeg)(
    "ffmpeg-recipes: the builder's trim command cuts a WAV to the asked length (skipped without ffmpeg)",
    async () => {
      const h = home();
      writeFileSync(join(h.cwd, "tone.wav"), wav(4));
      const before = statSync(join(h.cwd, "tone.wav")).size;
      followSkill("ffmpeg-recipes", [
        ([view = ""]) => {
          const { folder, body } = skillFrom(view);
          const builder = commandIn(body, /scripts\/ffmpeg-cmd\.mjs RECIPE INPUT OUTPUT/);
          if (!/`trim --start [^`]+` \(or `--duration \d+`\)/.test(body)) throw new Error("no trim syntax");
          const command = builder
            .replace("<skill folder>", folder)
            .replace("RECIPE INPUT OUTPUT [options]", "trim tone.wav tone-cut.wav --start 1 --duration 1.5");
          return reply().toolCall("terminal", { command });
        },
        // Run exactly the command the builder printed.
        (results) => reply().toolCall("terminal", { command: (results.at(-1) ?? "").trim() }),
        ([view = ""]) => {
          const verification = skillFrom(view).body.split("## Verification")[1] ?? "";
          const probe = commandIn(verification, /^ffprobe .*format=duration.* OUTPUT$/).replace(
            /OUTPUT$/,
            "tone-cut.wav",
          );
          return reply().toolCall("terminal", { command: probe });
        },
        (results) => reply().text(`tone-cut.wav is ${Number(results.at(-1)).toFixed(2)} s long.`),
      ]);
      const result = await runHermes(["-z", "Cut tone.wav from 1 s, 1.5 s long."], h);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim()).toBe("tone-cut.wav is 1.50 s long.");
      const probe = spawnSync(
        "ffprobe",
        ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", join(h.cwd, "tone-cut.wav")],
        { encoding: "utf8" },
      );
      expect(Number(probe.stdout)).toBeCloseTo(1.5, 2);
      expect(statSync(join(h.cwd, "tone.wav")).size).toBe(before);
    },
    30_000,
  );
});

describe("hermes skills", () => {
  it("hermes-cron-jobs: the skill's cronjob example creates a job that `hermes cron list` shows", async () => {
    const h = home();
    followSkill("hermes-cron-jobs", [
      ([view = ""]) => {
        const example = commandIn(skillFrom(view).body, /^cronjob\(action="create"/);
        const args: Record<string, unknown> = {};
        for (const m of example.matchAll(/(\w+)="([^"]*)"/g)) args[m[1] ?? ""] = m[2];
        const skills = /skills=\[([^\]]*)\]/.exec(example)?.[1];
        if (skills) args.skills = [...skills.matchAll(/"([^"]+)"/g)].map((m) => m[1]);
        args.name = "weekday-health";
        args.prompt = "Check this machine's health and report only problems; otherwise answer [SILENT].";
        return reply().toolCall("cronjob", args);
      },
      (results) => reply().text(`Scheduled: ${results.at(-1)}`),
    ]);
    const result = await runHermes(
      ["-z", "Every weekday at 8, check the server and tell me about problems."],
      h,
    );
    expect(result.code, result.stderr).toBe(0);
    const listed = await runHermes(["cron", "list", "--json"], h);
    expect(listed.code, listed.stderr).toBe(0);
    const { jobs } = JSON.parse(listed.stdout) as { jobs: Array<Record<string, unknown>> };
    expect(jobs).toHaveLength(1);
    const job = JSON.stringify(jobs[0]);
    expect(job).toContain('"name":"weekday-health"');
    expect(job).toContain("0 8 * * 1-5");
    expect(job).toContain("server-health");
    expect(job).toContain('"local"');
    const table = await runHermes(["cron", "list"], h);
    expect(table.stdout).toContain("weekday-health");
    expect(readFileSync(join(h.home, "cron", "jobs.json"), "utf8")).toContain("weekday-health");
  }, 30_000);
});
