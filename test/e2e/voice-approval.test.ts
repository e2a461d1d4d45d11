/**
 * Spoken approvals in a real terminal (tmux): with `hermes --voice` and `/voice tts`, a dangerous
 * command's approval question is read aloud by espeak-ng (kept by the test "speaker" for sox to
 * measure), and a push-to-talk answer from the test "microphone", transcribed by the fake Groq
 * speech API, settles the keyboard's question. An unclear answer approves nothing and the
 * keyboard prompt stays; typing still answers it.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeSpeechApi, startFakeSpeechApi } from "../support/fake-speech-api.js";
import { hasTmux, Terminal } from "../support/terminal.js";
import { hasAudioTools, soxStat, voiceRig } from "../support/voice-rig.js";

let llm: FakeLlm;
let speech: FakeSpeechApi;
const terminals: Terminal[] = [];

beforeEach(async () => {
  llm = await startFakeLlm();
  speech = await startFakeSpeechApi();
});
afterEach(async () => {
  for (const t of terminals.splice(0)) t.kill();
  await Promise.all([llm.close(), speech.close()]);
});

type Body = { tools?: unknown[]; messages: Array<{ role: string; content: unknown }> };
/** The conversation's last request (the session-title request offers no tools). */
function lastTurn(): Body {
  const turns = llm.chatRequests.map((r) => r.body as Body).filter((b) => (b.tools ?? []).length > 0);
  return turns.at(-1) as Body;
}
const toolResults = () =>
  lastTurn()
    .messages.filter((m) => m.role === "tool")
    .map((m) => JSON.stringify(m.content));

describe.skipIf(!hasTmux || !hasAudioTools)("spoken approvals in the REPL", () => {
  it("reads the question aloud, a spoken yes approves it once, an unclear answer approves nothing", async () => {
    const rig = voiceRig("yes", { leadSeconds: 0.3, tailSilence: 1.5, speakSeconds: 0.2 });
    const extra = [
      "stt:",
      "  provider: groq",
      "  groq:",
      `    base_url: ${speech.url}/openai/v1`,
      "tts:",
      "  provider: espeak-ng",
      "voice:",
      "  silence_duration: 0.8",
      "  beep_enabled: false",
      "",
    ].join("\n");
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url, extra));
    llm.respondWith((request) =>
      ((request.body as Body).tools ?? []).length === 0 ? reply().text("Voice session") : undefined,
    );
    mkdirSync(join(cwd, "build"));
    mkdirSync(join(cwd, "dist"));
    llm.enqueue(
      reply().toolCall("terminal", { command: "rm -rf build && echo build-removed" }),
      reply().text("Removed the build folder."),
      reply().toolCall("terminal", { command: "rm -rf dist && echo dist-removed" }),
      reply().text("Left dist alone."),
    );
    const term = Terminal.start({
      home,
      cwd,
      args: ["--voice"],
      env: {
        GROQ_API_KEY: speech.keys.groq,
        HERMES_VOICE_RECORD_COMMAND: rig.recordCommand,
        HERMES_VOICE_PLAY_COMMAND: rig.playCommand,
      },
    });
    terminals.push(term);
    await term.waitFor("Voice mode on: press Ctrl+B to talk");
    term.type("/voice tts");
    term.keys("Enter");
    await term.waitFor("Spoken answers on");

    term.type("delete the build folder");
    term.keys("Enter");
    await term.waitFor("Allow? once / session / always / Deny");
    await term.waitFor(
      '🎙 Or press Ctrl+B and say "yes", "session", "always" or "no"; anything else approves nothing.',
    );
    // The question was spoken: "Hermes wants to run: rm -rf build && echo build-removed. Approve?"
    for (let i = 0; i < 200 && rig.playedFiles().length === 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    const spoken = soxStat(rig.playedFiles()[0] as string);
    expect(spoken.seconds).toBeGreaterThan(2.5);
    expect(spoken.rms).toBeGreaterThan(0.02);

    speech.unregisteredText = "Yes.";
    term.keys("C-b");
    await term.waitFor("🎙 Yes.");
    await term.waitFor(/Allow\? once \/ session \/ always \/ Deny.*🎙 once/);
    await term.waitFor("Removed the build folder.");
    expect(existsSync(join(cwd, "build"))).toBe(false);
    expect(toolResults().join("\n")).toContain("build-removed");
    // The spoken answer was not sent to the model as a message.
    expect(
      lastTurn()
        .messages.filter((m) => m.role === "user")
        .map((m) => JSON.stringify(m.content)),
    ).toEqual([expect.stringContaining("delete the build folder")]);

    // An answer that carries more than a yes approves nothing; the keyboard still decides.
    term.type("and the dist folder");
    term.keys("Enter");
    await term.waitFor("rm -rf dist && echo dist-removed");
    speech.unregisteredText = "Yes, and also rm -rf /.";
    term.keys("C-b");
    await term.waitFor("Not a clear answer, so nothing was approved");
    expect(existsSync(join(cwd, "dist"))).toBe(true);
    term.type("n");
    term.keys("Enter");
    await term.waitFor("Left dist alone.");
    expect(existsSync(join(cwd, "dist"))).toBe(true);
    expect(toolResults().join("\n")).not.toContain("dist-removed");
  });
});
