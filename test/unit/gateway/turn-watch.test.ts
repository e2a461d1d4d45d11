/**
 * The inactivity heartbeat of a chat turn: the settings as config and environment give them, the
 * notes' wording, and the watch itself under fake timers: "still working" notes edited in place,
 * a warning once after the warning time without activity, the turn stopped at the timeout, the
 * clock at rest while the turn waits for the user, and activity that keeps a long turn alive.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "../../../src/agent/events.js";
import {
  heartbeatText,
  spokenDuration,
  TurnWatch,
  type TurnWatchSettings,
  timeoutText,
  turnWatchSettings,
  warningText,
} from "../../../src/gateway/messaging/turn-watch.js";
import type { OutboundTarget, PlatformAdapter } from "../../../src/gateway/platforms/types.js";

class NoteAdapter implements PlatformAdapter {
  readonly platform = "telegram";
  readonly capabilities = {
    maxMessageLength: 4000,
    edit: true,
    buttons: false,
    typing: true,
    media: false,
    maxMediaBytes: 0,
  };
  readonly messages: string[] = [];
  edits = 0;
  failSends = false;
  failEdits = false;
  constructor(edit = true) {
    this.capabilities.edit = edit;
  }
  async connect() {}
  async disconnect() {}
  async send(_t: OutboundTarget, text: string) {
    if (this.failSends) throw new Error("chat not found");
    this.messages.push(text);
    return { messageId: String(this.messages.length) };
  }
  async edit(_t: OutboundTarget, id: string, text: string) {
    if (this.failEdits) throw new Error("message to edit not found");
    this.edits++;
    this.messages[Number(id) - 1] = text;
  }
  async typing() {}
  async sendMedia(): Promise<{ messageId: string }> {
    throw new Error("no media");
  }
}

const settings = (over: Partial<TurnWatchSettings> = {}): TurnWatchSettings => ({
  notifyMs: 180_000,
  warningMs: 900_000,
  timeoutMs: 1_800_000,
  notes: "detailed",
  stepDetail: true,
  maxSteps: 90,
  ...over,
});

describe("turnWatchSettings", () => {
  it("reads upstream's keys in seconds, with upstream's defaults", () => {
    expect(turnWatchSettings({}, {}, "telegram")).toMatchObject({
      notifyMs: 180_000,
      warningMs: 900_000,
      timeoutMs: 1_800_000,
      maxSteps: 90,
    });
    const s = turnWatchSettings(
      {
        agent: {
          gateway_notify_interval: 0.5,
          gateway_timeout_warning: 2,
          gateway_timeout: 4,
          max_turns: 12,
        },
      },
      {},
      "slack",
    );
    expect(s).toMatchObject({ notifyMs: 500, warningMs: 2000, timeoutMs: 4000, maxSteps: 12 });
  });

  it("0 or less turns a limit off; junk falls back to the default", () => {
    const s = turnWatchSettings(
      { agent: { gateway_notify_interval: 0, gateway_timeout_warning: -1, gateway_timeout: "ninety" } },
      {},
      "telegram",
    );
    expect(s).toMatchObject({ notifyMs: null, warningMs: null, timeoutMs: 1_800_000 });
  });

  it("the environment variables win over config, as upstream's do", () => {
    const s = turnWatchSettings(
      { agent: { gateway_notify_interval: 60, gateway_timeout: 100 } },
      { HERMES_AGENT_NOTIFY_INTERVAL: "0", HERMES_AGENT_TIMEOUT: "7", HERMES_AGENT_TIMEOUT_WARNING: "" },
      "telegram",
    );
    expect(s).toMatchObject({ notifyMs: null, timeoutMs: 7000, warningMs: 900_000 });
  });

  it("display.long_running_notifications off silences the notes, per platform too; the limits stay", () => {
    const config = {
      display: {
        long_running_notifications: true,
        platforms: { discord: { long_running_notifications: false } },
      },
    };
    expect(turnWatchSettings(config, {}, "telegram").notifyMs).toBe(180_000);
    expect(turnWatchSettings(config, {}, "discord")).toMatchObject({ notifyMs: null, timeoutMs: 1_800_000 });
    expect(turnWatchSettings({ display: { long_running_notifications: "generic" } }, {}, "x").notes).toBe(
      "generic",
    );
    expect(turnWatchSettings({ display: { busy_ack_detail: false } }, {}, "x").stepDetail).toBe(false);
  });
});

describe("the notes' wording", () => {
  it("speaks durations a person reads", () => {
    expect([0, 45_000, 60_000, 12 * 60_000, 125 * 60_000, 120 * 60_000].map(spokenDuration)).toEqual([
      "0 s",
      "45 s",
      "1 min",
      "12 min",
      "2 h 5 min",
      "2 h",
    ]);
  });

  it("the note says how long, the step and the running tool unless told not to", () => {
    expect(heartbeatText(185_000, { steps: 4, tool: "terminal" }, settings())).toBe(
      "⏳ Still working (3 min so far; step 4 of 90, running terminal)",
    );
    expect(heartbeatText(185_000, { steps: 4 }, settings({ stepDetail: false }))).toBe(
      "⏳ Still working (3 min so far)",
    );
    expect(heartbeatText(185_000, { steps: 4, tool: "terminal" }, settings({ notes: "generic" }))).toBe(
      "⏳ Still working on it…",
    );
  });

  it("the warning says when the stop comes and how to stop now; the stop says how to allow longer", () => {
    expect(warningText(900_000, 1_800_000)).toBe(
      "⚠️ No activity for 15 min. If nothing happens in the next 15 min, I'll stop this task. You can wait, or send /stop to stop it now.",
    );
    expect(warningText(900_000, null)).not.toContain("I'll stop");
    const stop = timeoutText(1_800_000, { steps: 3, tool: "terminal" }, 90);
    expect(stop).toContain("no activity for 30 min");
    expect(stop).toContain("stuck in the terminal tool (step 3 of 90)");
    expect(stop).toContain("agent.gateway_timeout");
    expect(timeoutText(60_000, { steps: 2 }, 90)).toContain("waiting for the model (step 2 of 90)");
  });
});

describe("TurnWatch", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const tool = (callId: string, name: string): AgentEvent => ({ type: "tool_start", callId, name, args: {} });

  it("sends a note each interval, edited in place, and none after the turn is done", async () => {
    const adapter = new NoteAdapter();
    const stop = vi.fn();
    const watch = new TurnWatch(adapter, { chatId: "1" }, { settings: settings({ notifyMs: 1000 }), stop });
    watch.observe({ type: "turn_start", iteration: 1 });
    watch.observe(tool("c1", "terminal"));
    await vi.advanceTimersByTimeAsync(1000);
    expect(adapter.messages).toEqual(["⏳ Still working (1 s so far; step 1 of 90, running terminal)"]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(adapter.messages).toEqual(["⏳ Still working (3 s so far; step 1 of 90, running terminal)"]);
    expect(adapter.edits).toBe(2);
    watch.observe({ type: "done", reason: "completed", text: "ok", iterations: 1, usage: {} as never });
    await vi.advanceTimersByTimeAsync(5000);
    expect(adapter.messages).toHaveLength(1);
    expect(stop).not.toHaveBeenCalled();
  });

  it("sends a new note each time where the platform cannot edit, or when an edit fails", async () => {
    const adapter = new NoteAdapter(false);
    const watch = new TurnWatch(
      adapter,
      { chatId: "1" },
      { settings: settings({ notifyMs: 1000 }), stop() {} },
    );
    await vi.advanceTimersByTimeAsync(2000);
    expect(adapter.messages).toHaveLength(2);
    watch.stop();
    const editing = new NoteAdapter();
    const second = new TurnWatch(
      editing,
      { chatId: "1" },
      { settings: settings({ notifyMs: 1000 }), stop() {} },
    );
    await vi.advanceTimersByTimeAsync(1000);
    editing.failEdits = true;
    await vi.advanceTimersByTimeAsync(1000);
    expect(editing.messages).toHaveLength(2);
    second.stop();
  });

  it("warns once after the warning time without activity, then stops the turn at the timeout", async () => {
    const adapter = new NoteAdapter();
    const stop = vi.fn();
    const log = vi.fn();
    const watch = new TurnWatch(
      adapter,
      { chatId: "1" },
      { settings: settings({ notifyMs: null, warningMs: 10_000, timeoutMs: 20_000 }), stop, log },
    );
    watch.observe({ type: "turn_start", iteration: 2 });
    watch.observe(tool("c1", "terminal"));
    await vi.advanceTimersByTimeAsync(9_000);
    expect(adapter.messages).toEqual([]);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(adapter.messages).toEqual([warningText(10_000, 20_000)]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(adapter.messages).toHaveLength(1); // once
    expect(stop).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(stop).toHaveBeenCalledTimes(1);
    expect(watch.timedOut).toBe(true);
    expect(adapter.messages[1]).toBe(timeoutText(20_000, { steps: 2, tool: "terminal" }, 90));
    expect(log.mock.calls[0]?.[0]).toContain("without activity (terminal)");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(stop).toHaveBeenCalledTimes(1);
    expect(adapter.messages).toHaveLength(2);
  });

  it("a turn that keeps doing things runs past the timeout in wall time", async () => {
    const adapter = new NoteAdapter();
    const stop = vi.fn();
    const watch = new TurnWatch(
      adapter,
      { chatId: "1" },
      { settings: settings({ notifyMs: null, warningMs: 10_000, timeoutMs: 20_000 }), stop },
    );
    for (let i = 0; i < 10; i++) {
      await vi.advanceTimersByTimeAsync(8_000);
      watch.observe({ type: "tool_output", callId: "c1", name: "terminal", text: `line ${i}\n` });
    }
    expect(stop).not.toHaveBeenCalled();
    expect(adapter.messages).toEqual([]);
    watch.stop();
  });

  it("the clock rests while the turn waits for the user, and no notes are sent then", async () => {
    const adapter = new NoteAdapter();
    const stop = vi.fn();
    let waiting = true;
    const watch = new TurnWatch(
      adapter,
      { chatId: "1" },
      {
        settings: settings({ notifyMs: 1000, warningMs: 10_000, timeoutMs: 20_000 }),
        stop,
        waitingForUser: () => waiting,
      },
    );
    await vi.advanceTimersByTimeAsync(60_000);
    expect(stop).not.toHaveBeenCalled();
    expect(adapter.messages).toEqual([]);
    waiting = false;
    await vi.advanceTimersByTimeAsync(19_000);
    expect(stop).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(stop).toHaveBeenCalled();
    watch.stop();
  });

  it("a chat that cannot be reached is logged and the turn is still stopped", async () => {
    const adapter = new NoteAdapter();
    adapter.failSends = true;
    const stop = vi.fn();
    const log = vi.fn();
    new TurnWatch(
      adapter,
      { chatId: "1" },
      { settings: settings({ notifyMs: 1000, warningMs: null, timeoutMs: 3000 }), stop, log },
    );
    await vi.advanceTimersByTimeAsync(4000);
    expect(stop).toHaveBeenCalledTimes(1);
    expect(log.mock.calls.map((c) => c[0]).join("\n")).toContain("chat not found");
  });

  it("with every limit off it sets no timer at all", () => {
    const watch = new TurnWatch(
      new NoteAdapter(),
      { chatId: "1" },
      { settings: settings({ notifyMs: null, warningMs: null, timeoutMs: null }), stop() {} },
    );
    expect(vi.getTimerCount()).toBe(0);
    watch.stop();
  });
});
