/**
 * Voice mode in a real terminal (tmux), with the audio chain real except the devices: the
 * "microphone" delivers an espeak-ng utterance through sox, the fake Groq speech API (behind a
 * slow proxy, so the state can be seen) transcribes it, the fake LLM answers, espeak-ng speaks the
 * answer and the "speaker" keeps it for sox to measure. The status line shows each state.
 */

import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeSpeechApi, startFakeSpeechApi } from "../support/fake-speech-api.js";
import { hasTmux, Terminal } from "../support/terminal.js";
import { hasAudioTools, soxStat, uploadedAudio, type VoiceRig, voiceRig } from "../support/voice-rig.js";

let llm: FakeLlm;
let speech: FakeSpeechApi;
let slow: Server;
let slowUrl: string;
const terminals: Terminal[] = [];

beforeEach(async () => {
  llm = await startFakeLlm();
  speech = await startFakeSpeechApi();
  // Forwards to the speech API after a second, so "transcribing" stays on screen long enough to see.
  slow = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      setTimeout(async () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => !["host", "content-length", "connection"].includes(k)),
        ) as Record<string, string>;
        const answer = await fetch(`${speech.url}${req.url}`, {
          method: req.method ?? "POST",
          headers,
          body: Buffer.concat(chunks),
        });
        res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "" });
        res.end(Buffer.from(await answer.arrayBuffer()));
      }, 1000);
    });
  });
  await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
  slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
});
afterEach(async () => {
  for (const t of terminals.splice(0)) t.kill();
  slow.closeAllConnections();
  await new Promise((resolve) => slow.close(resolve));
  await Promise.all([llm.close(), speech.close()]);
});

function open(rig: VoiceRig, args: string[] = ["--voice"]) {
  const extra = [
    "stt:",
    "  provider: groq",
    "  groq:",
    `    base_url: ${slowUrl}/openai/v1`,
    "tts:",
    "  provider: espeak-ng",
    "voice:",
    "  silence_duration: 1.0",
    "",
  ].join("\n");
  const { home, cwd } = tempHome(fakeProviderConfig(llm.url, extra));
  const term = Terminal.start({
    home,
    cwd,
    args,
    env: {
      GROQ_API_KEY: speech.keys.groq,
      HERMES_VOICE_RECORD_COMMAND: rig.recordCommand,
      HERMES_VOICE_PLAY_COMMAND: rig.playCommand,
    },
  });
  terminals.push(term);
  return term;
}

/** The status line: the row above the prompt, or above the spinner row while a turn runs. */
function statusRow(screen: string): string {
  const lines = screen.trimEnd().split("\n");
  const at = lines.findLastIndex((l) => l.startsWith("❯"));
  const above = lines[at - 1] ?? "";
  return /^\S \S+…/.test(above) && !/^[●✎🎙🔊]/u.test(above) ? (lines[at - 2] ?? "") : above;
}

async function waitForStatus(term: Terminal, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let row = "";
  while (Date.now() < deadline) {
    row = statusRow(term.screen());
    if (pattern.test(row)) return row;
    await new Promise((r) => setTimeout(r, 40));
  }
  throw new Error(`Timed out waiting for ${pattern} on the status line; last: ${row}\n${term.screen()}`);
}

/** Whether the process is gone (or a zombie waiting to be reaped) within 3 s. */
async function stopped(pid: number): Promise<boolean> {
  for (let i = 0; i < 60; i++) {
    try {
      process.kill(pid, 0);
      if (/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))) return true;
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

describe.skipIf(!hasTmux || !hasAudioTools)("voice mode in the REPL", () => {
  it("talks with Ctrl+B: listening, transcribing, thinking, speaking on the status line; a key stops the speech", async () => {
    const rig = voiceRig("What is the capital of France", { leadSeconds: 1.5, speakSeconds: 20 });
    speech.unregisteredText = "What is the capital of France?";
    llm.enqueue(
      reply()
        .text(
          "The capital of **France** is Paris.\n\n```python\nprint('Paris')\n```\n\nIt lies on the Seine.",
        )
        .delay(1500),
    );
    const term = open(rig);
    await term.waitFor("Voice mode on: press Ctrl+B to talk");
    expect(await waitForStatus(term, /🎙 voice on · Ctrl\+B to talk · fake-model/)).toBeTruthy();
    term.type("/voice tts");
    term.keys("Enter");
    await term.waitFor("Spoken answers on");
    await waitForStatus(term, /voice on · Ctrl\+B to talk · tts/);

    term.keys("C-b");
    expect(await waitForStatus(term, /● listening… \(Ctrl\+B sends, Ctrl\+C cancels\)/)).toBeTruthy();
    await waitForStatus(term, /✎ transcribing…/);
    await waitForStatus(term, /🎙 thinking…/);
    const shown = await term.waitFor("🎙 What is the capital of France?");
    expect(shown).toContain("🎙 What is the capital of France?");
    await term.waitFor("The capital of France is Paris.");
    await waitForStatus(term, /🔊 speaking… \(any key stops\)/);
    const { existsSync } = await import("node:fs");
    const speakerPid = join(rig.dir, "speaker.pid");
    for (let i = 0; i < 200 && !existsSync(speakerPid); i++) await new Promise((r) => setTimeout(r, 50));
    const stopAt = Date.now();
    term.type("x");
    await waitForStatus(term, /^🎙 voice on · Ctrl\+B to talk · tts/, 5000);
    // The speaker would have gone on for 20 s: its process group was stopped at the key.
    expect(Date.now() - stopAt).toBeLessThan(4000);
    expect(await stopped(Number(readFileSync(speakerPid, "utf8")))).toBe(true);

    // The transcript went to the model as the user's message.
    const last = llm.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    const user = last.messages.filter((m) => m.role === "user").at(-1);
    expect(JSON.stringify(user?.content)).toContain("What is the capital of France?");
    // What was uploaded is the utterance, cut after the words; what was spoken is the answer's
    // prose (not its code), loud enough to hear.
    const upload = soxStat(await uploadedAudio(speech.requests[0] as never, rig.dir));
    expect(upload.seconds).toBeGreaterThan(1.9);
    expect(upload.seconds).toBeLessThan(3);
    expect(upload.rms).toBeGreaterThan(0.02);
    const answer = rig.playedFiles().filter((f) => !f.includes("beep"));
    expect(answer).toHaveLength(1);
    const spoken = soxStat(answer[0] as string);
    expect(spoken.seconds).toBeGreaterThan(2);
    expect(spoken.seconds).toBeLessThan(7);
    expect(spoken.rms).toBeGreaterThan(0.02);
    expect(rig.playedFiles().filter((f) => f.includes("beep"))).toHaveLength(2);
  });

  it("talking over the spoken answer stops it; the status line goes back to listening and the words are sent", async () => {
    // Every time the microphone opens it hears a second of the room, then the question.
    const rig = voiceRig("What is the capital of France", {
      leadSeconds: 0.5,
      leadSilence: 1,
      tailSilence: 2,
      speakSeconds: 20,
    });
    speech.unregisteredText = "What is the capital of France?";
    // The first question gets the first answer; the same words asked again get the second (other
    // requests, such as the session's title, get the first).
    llm.respondWith((request) => {
      const body = request.body as { messages?: Array<{ role: string }> } | undefined;
      const users = body?.messages?.filter((m) => m.role === "user").length ?? 0;
      return reply().text(users >= 2 ? "Paris, as I said." : "The capital of France is Paris.");
    });
    const term = open(rig);
    await term.waitFor("Voice mode on");
    term.type("/voice tts");
    term.keys("Enter");
    await term.waitFor("Spoken answers on");
    term.keys("C-b");
    await term.waitFor("The capital of France is Paris.");
    await waitForStatus(term, /🔊 speaking…/);
    // The user talks over it: without a key, speaking gives way to their words being taken down
    // (listening lasts as long as they talk; the slow speech API keeps "transcribing" visible).
    await waitForStatus(term, /● listening…|✎ transcribing…/);
    await term.waitFor("Paris, as I said.");
    const speakerPid = Number(readFileSync(join(rig.dir, "speaker.pid"), "utf8"));
    // The player was killed; it may take a moment to be reaped (a zombie still answers signal 0).
    expect(await stopped(speakerPid)).toBe(true);
    expect(speech.requests).toHaveLength(2);
    const second = llm.requests
      .map((r) => r.body as { messages?: Array<{ role: string; content: unknown }> } | undefined)
      .find((b) => (b?.messages?.filter((m) => m.role === "user").length ?? 0) >= 2);
    const users = second?.messages?.filter((m) => m.role === "user") ?? [];
    expect(JSON.stringify(users[1]?.content)).toContain("What is the capital of France?");
  });

  it("Ctrl+C while listening cancels the recording and the session goes on", async () => {
    const rig = voiceRig("never sent", { leadSeconds: 60 });
    llm.enqueue(reply().text("Still here."));
    const term = open(rig);
    await term.waitFor("Voice mode on");
    term.keys("C-b");
    await waitForStatus(term, /● listening/);
    const { existsSync } = await import("node:fs");
    for (let i = 0; i < 100 && !existsSync(rig.micLog); i++) await new Promise((r) => setTimeout(r, 50));
    term.keys("C-c");
    await term.waitFor("⏹ Voice input cancelled.");
    await waitForStatus(term, /^🎙 voice on · Ctrl\+B to talk/);
    expect(term.screen()).not.toContain("Press Ctrl+C again to quit");
    expect(speech.requests).toHaveLength(0);
    term.type("are you there?");
    term.keys("Enter");
    await term.waitFor("Still here.");
    term.type("/voice off");
    term.keys("Enter");
    await term.waitFor("Voice mode off");
    // Off: the record key records nothing.
    term.keys("C-b");
    await new Promise((r) => setTimeout(r, 500));
    expect(statusRow(term.screen())).not.toMatch(/listening|voice on/);
    expect(readFileSync(rig.micLog, "utf8").trim().split("\n")).toHaveLength(1);
  });

  it("leaving while listening (Ctrl+D, or the terminal closing) stops the microphone and leaves no audio", async () => {
    for (const leave of ["ctrl-d", "close-terminal"] as const) {
      // A microphone left open: it would record on long after the words.
      const rig = voiceRig("left behind", { leadSeconds: 0, tailSilence: 0.1, holdSeconds: 120 });
      const term = open(rig);
      await term.waitFor("Voice mode on");
      term.keys("C-b");
      await waitForStatus(term, /● listening/);
      const { existsSync } = await import("node:fs");
      const micPid = join(rig.dir, "mic.pid");
      const pidNow = () => (existsSync(micPid) ? Number(readFileSync(micPid, "utf8").trim()) : 0);
      for (let i = 0; i < 100 && !(pidNow() > 0); i++) await new Promise((r) => setTimeout(r, 50));
      const pid = pidNow();
      expect(pid).toBeGreaterThan(0);
      const recording = readFileSync(rig.micLog, "utf8").trim();
      for (let i = 0; i < 100 && !existsSync(recording); i++) await new Promise((r) => setTimeout(r, 50));
      expect(existsSync(recording)).toBe(true);
      if (leave === "ctrl-d") {
        term.keys("C-d");
        await term.waitFor("[exit 0]");
      } else {
        term.kill(); // SIGHUP to hermes, as when the window is closed
      }
      // The recorder's whole process group is gone (its `sleep 120` too), and the recording with it.
      const gone = () => {
        try {
          process.kill(-pid, 0);
          return false;
        } catch {
          return true;
        }
      };
      for (let i = 0; i < 100 && !gone(); i++) await new Promise((r) => setTimeout(r, 50));
      expect(gone(), leave).toBe(true);
      expect(existsSync(dirname(recording)), leave).toBe(false);
      expect(speech.requests, leave).toHaveLength(0);
    }
  });
});
