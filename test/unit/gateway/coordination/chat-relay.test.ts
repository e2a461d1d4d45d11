import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../../../src/config/defaults.js";
import { type Instance, type Instances, startInstances, until } from "../../../support/gateway-instances.js";
import { callTools, say } from "../../../support/scripted-transport.js";

const KEY = "agent:main:telegram:dm:100";
const display = (mode: string) => ({ display: { ...defaultConfig().display, busy_input_mode: mode } });
const gate = () => {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
};

let running: Instances | undefined;
function start(ids: string[], options: Parameters<typeof startInstances>[1] = {}) {
  const t = startInstances(ids, options);
  running = t;
  const [a, b] = t.list as [Instance, Instance];
  return { t, a, b };
}
afterEach(async () => {
  await running?.stop();
  running = undefined;
});

describe("one chat, one turn across instances", () => {
  it("queue mode: a second message arriving at B while A runs the turn is queued on A and answered after it", async () => {
    const { t, a, b } = start(["a", "b"], { config: display("queue") });
    const first = gate();
    a.model.push(say("answer one"), first.promise).push(say("answer two"));
    a.adapter.from("100", "one");
    await until(() => a.model.requests.length === 1, "A's first model call");
    expect(t.hub.chatHolder(KEY)).toBe("a");
    b.adapter.from("100", "two");
    // A answers "queued" through its own adapter, as it would for a message it received itself.
    await until(() => a.adapter.texts().some((m) => m.startsWith("📥 Queued")), "A's queued notice");
    first.open();
    await until(() => a.adapter.texts().includes("answer two"), "the second answer, from A");
    const texts = a.adapter.texts();
    expect(texts.indexOf("answer one")).toBeLessThan(texts.indexOf("answer two"));
    expect(b.model.requests).toHaveLength(0);
    expect(b.adapter.texts()).toEqual([]);
    expect(t.overlap.max).toBe(1);
    // The second turn saw the first (one conversation), and the chat is free once both are done.
    const users = a.model.requests[1]?.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(users).toEqual(["one", "two"]);
    await until(() => t.hub.chatHolder(KEY) === undefined, "the chat released");
  });

  it("steer mode: B's message steers A's running turn instead of starting one", async () => {
    const { t, a, b } = start(["a", "b"], { config: display("steer") });
    const first = gate();
    a.model.push(
      callTools(["todo", { todos: [{ id: "1", content: "x", status: "pending" }] }]),
      first.promise,
    );
    a.model.push(say("done, with the hint"));
    a.adapter.from("100", "plan it");
    await until(() => a.model.requests.length === 1, "A's first model call");
    b.adapter.from("100", "use the blue one");
    await until(() => a.adapter.texts().some((m) => m.startsWith("↪️ Noted")), "A's steer notice");
    first.open();
    await until(() => a.adapter.texts().includes("done, with the hint"), "the answer");
    const seen = JSON.stringify(a.model.requests[1]?.messages);
    expect(seen).toContain("use the blue one");
    expect(b.model.requests).toHaveLength(0);
    expect(t.overlap.max).toBe(1);
  });

  it("interrupt mode: B's message interrupts A's turn and A answers it next", async () => {
    const { a, b } = start(["a", "b"], { config: display("interrupt") });
    a.model.push(say("never delivered"), new Promise(() => undefined)).push(say("answer to the second"));
    a.adapter.from("100", "first");
    await until(() => a.model.requests.length === 1, "A's first model call");
    b.adapter.from("100", "actually, second");
    await until(() => a.adapter.texts().includes("answer to the second"), "the second answer");
    expect(a.adapter.texts()).not.toContain("never delivered");
    expect(b.model.requests).toHaveLength(0);
  });

  it("many messages of one chat spread over three instances never run two turns at once", async () => {
    const { t } = start(["a", "b", "c"], { config: display("queue") });
    for (const i of t.list) for (let n = 0; n < 12; n++) i.model.push(say(`reply ${i.id}${n}`));
    for (let n = 0; n < 12; n++) {
      t.list[n % 3]?.adapter.from("100", `message ${n}`);
      await new Promise((r) => setTimeout(r, n % 4 === 0 ? 15 : 1));
    }
    await until(
      () => t.list.every((i) => t.hub.chatHolder(KEY) === undefined && !i.relay.holds(KEY)),
      "all done",
    );
    await new Promise((r) => setTimeout(r, 100));
    await until(() => t.hub.chatHolder(KEY) === undefined, "all done");
    expect(t.overlap.max).toBe(1);
    // Every message reached a model call, once.
    const seen = t.list.flatMap((i) => i.model.requests.map((r) => r.messages.at(-1)?.content ?? ""));
    for (let n = 0; n < 12; n++)
      expect(seen.filter((s) => new RegExp(`message ${n}\\b`).test(String(s))).length).toBe(1);
  });

  it("a chat released by A runs on B when the next message arrives there (no claim outlives its turns)", async () => {
    const { t, a, b } = start(["a", "b"]);
    a.model.push(say("from a"));
    b.model.push(say("from b"));
    a.adapter.from("100", "hello");
    await until(() => a.adapter.texts().includes("from a"), "A's answer");
    await until(() => t.hub.chatHolder(KEY) === undefined, "released");
    b.adapter.from("100", "again");
    await until(() => b.adapter.texts().includes("from b"), "B's answer");
    expect(a.model.requests).toHaveLength(1);
    expect(a.adapter.texts()).not.toContain("from b");
    await until(() => t.hub.chatHolder(KEY) === undefined, "released by B");
  });
});

describe("approvals and /stop reach the instance running the turn", () => {
  it("an approval button pressed on B answers A's pending approval; the command runs on A", async () => {
    const { t, a, b } = start(["a", "b"]);
    const victim = join(t.cwd, "victim");
    mkdirSync(victim);
    a.model.push(callTools(["terminal", { command: `rm -rf ${victim}` }])).push(say("Deleted."));
    a.adapter.from("100", "delete it");
    const ask = await until(
      () => [...a.adapter.messages.entries()].find(([, m]) => m.options?.buttons),
      "A's approval question",
    );
    expect(existsSync(victim)).toBe(true);
    let acknowledged = false;
    b.adapter.press("100", ask[1].options?.buttons?.[0]?.[0]?.data ?? "", async () => {
      acknowledged = true;
    });
    await until(() => a.adapter.texts().includes("Deleted."), "A's answer");
    expect(existsSync(victim)).toBe(false);
    expect(acknowledged).toBe(true);
    expect(a.adapter.messages.get(ask[0])?.text).toMatch(/Approved once/);
  });

  it("a forged button press via B (another user) does not approve A's command", async () => {
    const { t, a, b } = start(["a", "b"], {
      config: { approvals: { mode: "manual", timeout: 0.5, cron_mode: "deny" } },
    });
    const victim = join(t.cwd, "stays");
    mkdirSync(victim);
    a.model.push(callTools(["terminal", { command: `rm -rf ${victim}` }])).push(say("Left it."));
    a.adapter.from("100", "delete it");
    const ask = await until(
      () => [...a.adapter.messages.values()].find((m) => m.options?.buttons),
      "question",
    );
    const data = ask.options?.buttons?.[0]?.[0]?.data ?? "";
    // User 200 is allowed to talk to the bot, but the approval belongs to user 100's turn.
    b.adapter.handlers.onAction({
      source: { platform: "telegram", chatType: "dm", chatId: "100", userId: "200" },
      data,
    });
    await until(() => a.adapter.texts().includes("Left it."), "the answer after the timeout");
    expect(existsSync(victim)).toBe(true);
  });

  it("a 'yes' typed to B approves the command waiting on A", async () => {
    const { t, a, b } = start(["a", "b"]);
    const victim = join(t.cwd, "victim2");
    mkdirSync(victim);
    a.model.push(callTools(["terminal", { command: `rm -rf ${victim}` }])).push(say("Gone."));
    a.adapter.from("100", "delete it");
    await until(() => [...a.adapter.messages.values()].find((m) => m.options?.buttons), "question");
    b.adapter.from("100", "yes");
    await until(() => a.adapter.texts().includes("Gone."), "A's answer");
    expect(existsSync(victim)).toBe(false);
    expect(b.model.requests).toHaveLength(0);
  });

  it("/stop sent to B stops the turn running on A, and nothing of it is delivered", async () => {
    const { t, a, b } = start(["a", "b"]);
    a.model.push(say("should never be delivered"), new Promise(() => undefined));
    a.adapter.from("100", "work on it");
    await until(() => a.model.requests.length === 1, "A's model call");
    b.adapter.from("100", "/stop");
    await until(() => t.hub.chatHolder(KEY) === undefined, "the turn ended and the chat was released");
    expect(a.adapter.texts()).not.toContain("should never be delivered");
    expect(b.model.requests).toHaveLength(0);
    // The stop was answered in the chat by the instance that ran the turn.
    expect(a.adapter.texts().some((m) => /stop/i.test(m))).toBe(true);
  });
});

describe("draining an instance", () => {
  it("finishes A's running turn, passes a message that came for it to B afterwards, and sends new chats to B", async () => {
    const { t, a, b } = start(["a", "b"], { config: display("queue") });
    const first = gate();
    a.model.push(say("A finishes this"), first.promise);
    b.model.push(say("B answers")).push(say("B answers again"));
    const asked = (text: string) =>
      b.model.requests.some((r) => r.messages.some((m) => m.role === "user" && m.content === text));
    a.adapter.from("100", "long job");
    await until(() => a.model.requests.length === 1, "A's model call");
    // SIGTERM on A: no new claims, running turns finish.
    a.relay.drain();
    await a.coordinator.drain();
    const stopped = a.router.stop({ drainMs: 10_000 });
    b.adapter.from("100", "and one more thing");
    a.adapter.from("200", "a new chat reaching A while it drains");
    await until(() => asked("a new chat reaching A while it drains"), "the new chat run on B");
    expect(t.hub.chatHolder(KEY)).toBe("a");
    expect(asked("and one more thing")).toBe(false);
    first.open();
    await stopped;
    expect(a.adapter.texts()).toContain("A finishes this");
    await until(() => asked("and one more thing"), "the follow-up run on B once A let the chat go");
    await until(() => b.adapter.texts().includes("B answers again"), "B's second answer");
    expect(a.model.requests).toHaveLength(1);
  });
});

describe("a holder that died", () => {
  it("a message forwarded to a dead holder is not lost: unconfirmed, it is routed again and runs once the claim lapses", async () => {
    const { t, a, b } = start(["a", "b"]);
    a.model.push(say("A never finishes"), new Promise(() => undefined));
    b.model.push(say("B picked it up"));
    a.adapter.from("100", "start");
    await until(() => a.model.requests.length === 1, "A's model call");
    t.hub.kill("a");
    b.adapter.from("100", "are you there?");
    await until(() => b.adapter.texts().includes("B picked it up"), "B's answer after A's claim lapsed");
    const asked = b.model.requests[0]?.messages.filter((m) => m.role === "user").map((m) => m.content);
    expect(asked?.at(-1)).toBe("are you there?");
    expect(t.hub.log.some((m) => m.topic === "chat.input" && m.to === "a")).toBe(true);
  });

  it("two messages routed again away from a dead holder keep their order, even when the first is taken back late", async () => {
    const { t, a, b } = start(["a", "b"], { config: display("queue") });
    a.model.push(say("A never finishes"), new Promise(() => undefined));
    b.model.push(say("answer")).push(say("answer again"));
    a.adapter.from("100", "start");
    await until(() => a.model.requests.length === 1, "A's model call");
    t.hub.kill("a");
    // B's ledger answers the first take-back slowly (a busy database connection).
    const handoffs = b.coordinator.handoffs!;
    const withdraw = handoffs.withdraw.bind(handoffs);
    let slow = true;
    handoffs.withdraw = async (id: string) => {
      if (slow) {
        slow = false;
        await new Promise((r) => setTimeout(r, 700));
      }
      return withdraw(id);
    };
    b.adapter.from("100", "first message");
    b.adapter.from("100", "second message");
    const users = () =>
      (b.model.requests.at(-1)?.messages ?? [])
        .filter((m) => m.role === "user")
        .map((m) => String(m.content));
    await until(() => users().some((u) => u.includes("second message")), "the second message read on B");
    const history = users().join("\n");
    expect(history.indexOf("first message")).toBeGreaterThan(-1);
    expect(history.indexOf("first message")).toBeLessThan(history.indexOf("second message"));
  });
});
