import { describe, expect, it } from "vitest";
import { NOTICES_HEADER } from "../../../src/agent/notices.js";
import type { ChatRequest } from "../../../src/ai/types.js";
import { defaultConfig } from "../../../src/config/defaults.js";

const DEFAULT_CONFIG = defaultConfig();

import { setup, stopRoutersAfterEach, until } from "../../support/router-harness.js";
import { callTools, say } from "../../support/scripted-transport.js";

stopRoutersAfterEach();

describe("MessageRouter: background work reporting back", () => {
  const lastUser = (request: ChatRequest | undefined) =>
    String(request?.messages.filter((m) => m.role === "user").at(-1)?.content ?? "");

  it("runs a turn in the chat when a background process with notify_on_complete ends", async () => {
    const t = setup();
    t.transport
      .push(
        callTools([
          "terminal",
          { command: "sleep 0.3; echo gw-done", background: true, notify_on_complete: true },
        ]),
      )
      .push(say("Started it."))
      .push(say("It finished: gw-done."));
    t.adapter.from("100", "run the job");
    await until(() => t.adapter.texts().includes("Started it."), "the first answer");
    // Nobody writes again: the process ending starts the turn.
    await until(() => t.adapter.texts().includes("It finished: gw-done."), "the woken turn");
    const woken = lastUser(t.transport.requests[2]);
    expect(woken.startsWith(NOTICES_HEADER)).toBe(true);
    expect(woken).toContain("gw-done");
    expect(woken).not.toContain("run the job");
  });

  it("delivers a notice that arrives during a turn right after that turn", async () => {
    const t = setup();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    t.transport
      .push(
        callTools(["terminal", { command: "echo quick-exit", background: true, notify_on_complete: true }]),
      )
      .push(say("Still thinking about it."), gate)
      .push(say("Noted the exit."));
    t.adapter.from("100", "go");
    await until(() => t.transport.requests.length >= 2, "the second model call");
    // The process ends (and its notice waits) while the turn is still running.
    await until(() => t.chats[0]?.pendingWake(), "the exit notice");
    expect(t.chats[0]?.running).toBe(true);
    open();
    await until(() => t.adapter.texts().includes("Noted the exit."), "the follow-up turn");
    expect(t.transport.requests).toHaveLength(3);
    expect(lastUser(t.transport.requests[2])).toContain("quick-exit");
  });
});

describe("display.runtime_footer on replies", () => {
  it("ends the final answer with the footer when enabled; a silent answer stays silent", async () => {
    const t = setup({
      config: {
        display: { ...DEFAULT_CONFIG.display, runtime_footer: { enabled: true, fields: ["model", "cwd"] } },
      },
    });
    t.transport.push(say("Here you go.")).push(say("[SILENT]")).push(say("Third."));
    t.adapter.from("100", "hi");
    const answer = await until(
      () => t.adapter.texts().find((text) => text.startsWith("Here you go.")),
      "the answer",
    );
    expect(answer).toMatch(/^Here you go\.\n\n\S+ · \/.+\/work$/);
    t.adapter.from("100", "nothing to say");
    await until(() => t.transport.requests.length === 2, "the second turn");
    t.adapter.from("100", "and now?");
    await until(() => t.adapter.texts().some((text) => text.startsWith("Third.")), "the third answer");
    // The silent turn sent nothing: no footer on its own, no silence token.
    const texts = t.adapter.texts();
    expect(texts.filter((text) => !text.startsWith("Here you go.") && !text.startsWith("Third."))).toEqual(
      [],
    );
  });

  it("is off by default", async () => {
    const t = setup();
    t.transport.push(say("Plain answer."));
    t.adapter.from("100", "hi");
    await until(() => t.adapter.texts().includes("Plain answer."), "the answer");
    expect(t.adapter.texts()).toEqual(["Plain answer."]);
  });
});
