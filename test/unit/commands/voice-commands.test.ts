/** /voice: one registry entry; the word goes to the surface's VoiceControl, which does the work. */
import { describe, expect, it } from "vitest";
import type { CommandContext, VoiceControl } from "../../../src/commands/index.js";
import { fakeContext, registry } from "../../support/command-context.js";

function withVoice(voice: VoiceControl | undefined, surface: "repl" | "chat" = "repl") {
  const c = fakeContext({ surface: { kind: surface } });
  const ctx: CommandContext = voice ? { ...c.ctx, voice } : c.ctx;
  return { ...c, ctx };
}

async function run(text: string, ctx: CommandContext) {
  const parsed = registry.parse(text);
  if (parsed.kind !== "command") throw new Error(`not a command: ${text}`);
  await parsed.command.run(parsed.args, ctx);
}

function recorder(extraWords?: string[]) {
  const calls: Array<[string, string]> = [];
  const voice: VoiceControl = {
    ...(extraWords ? { extraWords } : {}),
    run: (word, rest) => {
      calls.push([word, rest]);
      return [`did ${word}`];
    },
  };
  return { voice, calls };
}

describe("/voice", () => {
  it("hands on, off, tts and status to the surface and shows its answer; no word means status", async () => {
    const { voice, calls } = recorder();
    const c = withVoice(voice);
    for (const text of ["/voice on", "/voice OFF", "/voice tts", "/voice status", "/voice"])
      await run(text, c.ctx);
    expect(calls.map(([w]) => w)).toEqual(["on", "off", "tts", "status", "status"]);
    expect(c.printed).toEqual(["did on", "did off", "did tts", "did status", "did status"]);
  });

  it("refuses an unknown word before the surface sees it, naming the choices", async () => {
    const { voice, calls } = recorder();
    const c = withVoice(voice);
    await expect(run("/voice record; rm -rf ~", c.ctx)).rejects.toThrow(
      /Unknown \/voice argument "record;": use \/voice on, \/voice off, \/voice tts, \/voice status/,
    );
    expect(calls).toEqual([]);
  });

  it("lets a surface add its own words (a chat's), with the rest of the line", async () => {
    const { voice, calls } = recorder(["join"]);
    const c = withVoice(voice, "chat");
    await run("/voice join General", c.ctx);
    expect(calls).toEqual([["join", "General"]]);
    const [candidates] = await registry.complete("/voice ", c.ctx);
    expect(candidates).toEqual(["on", "off", "tts", "status", "join"]);
  });

  it("refuses join, channel and leave where the surface has no voice channels, saying they are Discord's", async () => {
    for (const surface of ["repl", "chat"] as const) {
      const { voice, calls } = recorder(surface === "chat" ? ["enable", "disable"] : undefined);
      const c = withVoice(voice, surface);
      for (const word of ["join", "channel", "LEAVE"])
        await expect(run(`/voice ${word} General`, c.ctx)).rejects.toThrow(
          /^Voice channels are a Discord feature: type \/voice join in a Discord server's text channel/,
        );
      expect(calls).toEqual([]);
    }
  });

  it("hands join, channel and leave to a surface that lists them (Discord), with the rest of the line", async () => {
    const { voice, calls } = recorder(["enable", "disable", "join", "channel", "leave"]);
    const c = withVoice(voice, "chat");
    await run("/voice join <#123>", c.ctx);
    await run("/voice channel", c.ctx);
    await run("/voice leave", c.ctx);
    expect(calls).toEqual([
      ["join", "<#123>"],
      ["channel", ""],
      ["leave", ""],
    ]);
  });

  it("says voice is not available on a surface without one, and does nothing", async () => {
    const c = withVoice(undefined);
    await run("/voice on", c.ctx);
    expect(c.printed).toEqual(["Voice mode is not available here."]);
  });

  it("is offered on both surfaces and may run during a turn (to stop speech or turn voice off)", () => {
    const voice = registry.get("voice");
    expect(voice?.surfaces ?? "both").toBe("both");
    expect(voice?.availableWhileRunning).toBe(true);
    expect(registry.menu().map((m) => m.name)).toContain("voice");
  });
});
