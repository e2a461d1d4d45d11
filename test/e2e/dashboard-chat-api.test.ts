/**
 * The dashboard chat's API through the built CLI and raw HTTP, as a script or an attacker would use
 * it: the turn streams as server-sent events in several text frames and lands in state.db with
 * source dashboard; a request without the CSRF token or from a foreign Origin starts no turn;
 * approvals answer only in their own conversation (404 otherwise); a protected path takes only
 * once or deny; a second turn in a running conversation is refused (409); slash commands run
 * through the shared registry.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, tempHome } from "../support/cli.js";
import { dashboardClient, http, type RunningDashboard, startDashboardProcess } from "../support/dashboard.js";
import { openChatStream } from "../support/dashboard-chat.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";
import { TEST_SERVER } from "../support/mcp-servers.js";
import { isRunning, waitFor } from "../unit/tools/terminal/helpers.js";

const llm = useFakeLlm();
let h: { home: string; cwd: string };
let dash: RunningDashboard;
let api: ReturnType<typeof dashboardClient>;
let headers: Record<string, string>;
/** New sessions get a title from the auxiliary model: its own fake, so the scripts stay in order. */
let titles: FakeLlm;

beforeAll(async () => {
  titles = await startFakeLlm();
  titles.respondWith(() => reply().text("A dashboard chat"));
  const aux = `auxiliary:\n  title_generation:\n    base_url: ${titles.url}\n    model: title-model\n`;
  h = tempHome(fakeProviderConfig(llm.url, `approvals:\n  timeout: 30\n${aux}`));
  dash = await startDashboardProcess(h);
  api = dashboardClient(dash, dash.token ?? "");
  headers = {
    authorization: `Bearer ${dash.token}`,
    "x-csrf-token": await api.csrf(),
    origin: `http://127.0.0.1:${dash.port}`,
  };
}, 60_000);

afterAll(async () => {
  await dash?.stop();
  await titles?.close();
});

const dashboardSessions = async () =>
  (await api.get("/api/sessions?source=dashboard")).json()["sessions"] as Array<{
    id: string;
    source: string;
  }>;

describe("the dashboard chat API", () => {
  it("streams a turn as text frames and records it with source dashboard; a second message continues it", async () => {
    llm.enqueue(reply().text("The pelican is a large water bird with a pouch."));
    const stream = openChatStream(dash.port, headers, { message: "tell me about pelicans" });
    const done = await stream.done;
    expect(done.status).toBe(200);
    expect(done.text).toBe("The pelican is a large water bird with a pouch.");
    // The fake sends the text in pieces; they reach the client as several frames, not one.
    expect(done.events.filter((e) => e.event === "text").length).toBeGreaterThan(1);
    const session = done.events.find((e) => e.event === "session")?.data["session_id"] as string;
    expect(done.events.at(-1)?.event).toBe("done");
    expect(done.events.at(-1)?.data["reason"]).toBe("completed");
    const rows = await dashboardSessions();
    expect(rows.map((r) => r.id)).toContain(session);

    llm.enqueue(reply().text("They live near water."));
    const again = await openChatStream(dash.port, headers, { message: "where?", session_id: session }).done;
    expect(again.text).toBe("They live near water.");
    const sent = llm.chatRequests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(sent.messages)).toContain("tell me about pelicans");
    const transcript = (await api.get(`/api/sessions/${session}`)).json()["messages"] as Array<{
      content: string;
    }>;
    expect(transcript.map((m) => m.content)).toContain("They live near water.");
  });

  it("starts no turn without the CSRF token, from a foreign Origin, or cross-site", async () => {
    const before = llm.chatRequests.length;
    const sessions = (await dashboardSessions()).length;
    const attempts: Array<Record<string, string>> = [
      { authorization: headers["authorization"] ?? "", origin: headers["origin"] ?? "" },
      { ...headers, "x-csrf-token": "wrong" },
      { ...headers, origin: "http://evil.example" },
      { ...headers, "sec-fetch-site": "cross-site" },
    ];
    for (const attempt of attempts) {
      const answer = await openChatStream(dash.port, attempt, { message: "rm -rf everything" }).done;
      expect(answer.status).toBe(403);
      expect(answer.events).toEqual([]);
    }
    const anonymous = await http(dash.port, "POST", "/api/chat", { body: JSON.stringify({ message: "hi" }) });
    expect(anonymous.status).toBe(401);
    expect(llm.chatRequests.length).toBe(before);
    expect((await dashboardSessions()).length).toBe(sessions);
  });

  it("refuses bad input clearly: no message, a bad session id, an unknown session", async () => {
    expect((await api.send("POST", "/api/chat", {})).status).toBe(400);
    expect((await api.send("POST", "/api/chat", { message: "  " })).status).toBe(400);
    expect((await api.send("POST", "/api/chat", { message: "hi", session_id: "../etc" })).status).toBe(400);
    const unknown = await api.send("POST", "/api/chat", {
      message: "hi",
      session_id: "20990101_000000_nope",
    });
    expect(unknown.status).toBe(404);
    expect((await api.send("POST", "/api/chat/20990101_000000_nope/stop")).status).toBe(404);
  });

  it("keeps approvals to their conversation, refuses a second turn while one runs, and a denial runs nothing", async () => {
    const victim = join(h.cwd, "victim-api");
    mkdirSync(victim, { recursive: true });
    const marker = join(h.cwd, "marker-api");
    // Another, finished conversation.
    llm.enqueue(reply().text("ok"));
    const other = await openChatStream(dash.port, headers, { message: "hello" }).done;
    const otherId = other.events.find((e) => e.event === "session")?.data["session_id"] as string;

    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${victim} && touch ${marker}` }),
      reply().text("Refused."),
    );
    const stream = openChatStream(dash.port, headers, { message: "clean up" });
    const asked = await stream.next("approval");
    const id = asked.data["id"] as string;
    const session = stream.events.find((e) => e.event === "session")?.data["session_id"] as string;
    expect(asked.data["command"]).toBe(`rm -rf ${victim} && touch ${marker}`);
    expect(asked.data["choices"]).toEqual(["once", "session", "always", "deny"]);

    // A second turn in the same conversation while this one waits.
    const second = await api.send("POST", "/api/chat", { message: "and again", session_id: session });
    expect(second.status).toBe(409);
    // The id is not the other conversation's, nor is a made-up one this conversation's.
    const crossed = await api.send("POST", `/api/chat/${otherId}/approvals/${id}`, { decision: "once" });
    expect(crossed.status).toBe(404);
    const madeUp = await api.send("POST", `/api/chat/${session}/approvals/0123456789abcdef`, {
      decision: "once",
    });
    expect(madeUp.status).toBe(404);
    const noQuestion = await api.send("POST", `/api/chat/${session}/questions/${id}`, { answer: "yes" });
    expect(noQuestion.status).toBe(404);
    const badChoice = await api.send("POST", `/api/chat/${session}/approvals/${id}`, { decision: "sure" });
    expect(badChoice.status).toBe(400);
    const noCsrf = await http(dash.port, "POST", `/api/chat/${session}/approvals/${id}`, {
      headers: { authorization: `Bearer ${dash.token}` },
      body: JSON.stringify({ decision: "once" }),
    });
    expect(noCsrf.status).toBe(403);
    expect(existsSync(marker)).toBe(false);

    const denied = await api.send("POST", `/api/chat/${session}/approvals/${id}`, { decision: "deny" });
    expect(denied.status).toBe(200);
    const done = await stream.done;
    expect(done.events.find((e) => e.event === "approval_resolved")?.data).toMatchObject({
      id,
      decision: "deny",
    });
    expect(done.text).toBe("Refused.");
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(victim)).toBe(true);
    // Answered once: the id is gone.
    expect(
      (await api.send("POST", `/api/chat/${session}/approvals/${id}`, { decision: "once" })).status,
    ).toBe(404);
  });

  it("offers only once or deny for a protected path (Hermes's own config) and refuses the rest", async () => {
    const config = join(h.home, "config.yaml");
    const before = readFileSync(config, "utf8");
    const command = `echo "approvals: {mode: off}" >> ${config}`;
    llm.enqueue(reply().toolCall("terminal", { command }), reply().text("Left alone."));
    const stream = openChatStream(dash.port, headers, { message: "turn approvals off" });
    const asked = await stream.next("approval");
    const session = stream.events.find((e) => e.event === "session")?.data["session_id"] as string;
    expect(asked.data["protected_path"]).toBe(true);
    expect(asked.data["choices"]).toEqual(["once", "deny"]);
    for (const decision of ["session", "always"]) {
      const refused = await api.send("POST", `/api/chat/${session}/approvals/${asked.data["id"]}`, {
        decision,
      });
      expect(refused.status).toBe(422);
    }
    expect(
      (await api.send("POST", `/api/chat/${session}/approvals/${asked.data["id"]}`, { decision: "deny" }))
        .status,
    ).toBe(200);
    expect((await stream.done).text).toBe("Left alone.");
    expect(readFileSync(config, "utf8")).toBe(before);
  });

  it("runs slash commands through the shared registry: /help answers without a model call", async () => {
    const before = llm.chatRequests.length;
    const done = await openChatStream(dash.port, headers, { message: "/help" }).done;
    const text = done.events
      .filter((e) => e.event === "command")
      .map((e) => String(e.data["text"]))
      .join("\n");
    expect(text).toContain("/new");
    expect(done.events.at(-1)?.data["reason"]).toBe("command");
    const unknown = await openChatStream(dash.port, headers, { message: "/nosuchthing" }).done;
    expect(JSON.stringify(unknown.events)).toContain("Unknown command /nosuchthing");
    expect(llm.chatRequests.length).toBe(before);
  });

  it("redacts a secret the model streams, even split across frames", async () => {
    writeFileSync(join(h.home, ".env"), "OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234567890\n");
    llm.enqueue(reply().text("The key is sk-proj-abcdefghijklmnop1234567890 right there."));
    const done = await openChatStream(dash.port, headers, { message: "what is the key?" }).done;
    expect(done.body).not.toContain("abcdefghijklmnop1234567890");
    expect(done.text).toContain("The key is");
  });
});

describe("the dashboard chat when nobody answers or the browser leaves", () => {
  let quick: RunningDashboard;
  let quickHome: { home: string; cwd: string };
  let quickHeaders: Record<string, string>;

  beforeAll(async () => {
    const aux = `auxiliary:\n  title_generation:\n    base_url: ${titles.url}\n    model: title-model\n`;
    // config.yaml's MCP servers join the chat's tools, as in the terminal.
    const mcp = `mcp_servers:\n  probe:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(TEST_SERVER)}]\n`;
    quickHome = tempHome(fakeProviderConfig(llm.url, `approvals:\n  timeout: 1\n${aux}${mcp}`));
    quick = await startDashboardProcess(quickHome);
    const client = dashboardClient(quick, quick.token ?? "");
    quickHeaders = {
      authorization: `Bearer ${quick.token}`,
      "x-csrf-token": await client.csrf(),
      origin: `http://127.0.0.1:${quick.port}`,
    };
  }, 30_000);

  afterAll(async () => {
    await quick?.stop();
  });

  it("offers config.yaml's MCP servers' tools and runs them", async () => {
    llm.enqueue(reply().toolCall("mcp_probe_echo", { text: "from the dashboard" }), reply().text("Echoed."));
    const before = llm.chatRequests.length;
    const done = await openChatStream(quick.port, quickHeaders, { message: "echo something" }).done;
    expect(done.text).toBe("Echoed.");
    const first = llm.chatRequests[before]?.body as { tools?: Array<{ function: { name: string } }> };
    expect(first.tools?.map((t) => t.function.name)).toContain("mcp_probe_echo");
    expect(done.events.find((e) => e.event === "tool_end")?.data).toMatchObject({
      name: "mcp_probe_echo",
      ok: true,
    });
    expect(String(done.events.find((e) => e.event === "tool_end")?.data["result"])).toContain(
      "echo: from the dashboard",
    );
  });

  it("denies an approval nobody answers within approvals.timeout; the command does not run", async () => {
    const marker = join(quickHome.cwd, "marker-timeout");
    const victim = join(quickHome.cwd, "victim-timeout");
    mkdirSync(victim, { recursive: true });
    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${victim} && touch ${marker}` }),
      reply().text("Nobody said yes."),
    );
    const done = await openChatStream(quick.port, quickHeaders, { message: "clean up" }).done;
    const resolved = done.events.find((e) => e.event === "approval_resolved");
    expect(resolved?.data).toMatchObject({ decision: "deny", by: "timeout" });
    expect(done.text).toBe("Nobody said yes.");
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(victim)).toBe(true);
  });

  it("interrupts the turn and kills its command when the browser goes away mid-turn", async () => {
    const pidFile = join(quickHome.cwd, "left.pid");
    llm.enqueue(reply().toolCall("terminal", { command: `sh -c 'echo $$ > ${pidFile}; exec sleep 300'` }));
    const stream = openChatStream(quick.port, quickHeaders, { message: "wait a long time" });
    const session = (await stream.next("session")).data["session_id"] as string;
    await stream.next("tool_start");
    const pid = await waitFor(
      () => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").trim()) || null : null),
      15_000,
      "the command to start",
    );
    stream.close();
    await waitFor(() => !isRunning(pid), 10_000, "the command's process to end");
    // The conversation is free once the turn has wound up (409 until then): a new message is answered.
    llm.enqueue(reply().text("Back."));
    const again = await waitFor(
      async () => {
        const answer = await openChatStream(quick.port, quickHeaders, {
          message: "hello?",
          session_id: session,
        }).done;
        return answer.status === 409 ? null : answer;
      },
      10_000,
      "the conversation to be free",
    );
    expect(again.status).toBe(200);
    expect(again.text).toBe("Back.");
  });

  it("POST /stop interrupts a running command and answers stopped", async () => {
    const pidFile = join(quickHome.cwd, "stop.pid");
    llm.enqueue(reply().toolCall("terminal", { command: `sh -c 'echo $$ > ${pidFile}; exec sleep 300'` }));
    const stream = openChatStream(quick.port, quickHeaders, { message: "wait again" });
    const session = (await stream.next("session")).data["session_id"] as string;
    const pid = await waitFor(
      () => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8").trim()) || null : null),
      15_000,
      "the command to start",
    );
    const client = dashboardClient(quick, quick.token ?? "");
    const stopped = await client.send("POST", `/api/chat/${session}/stop`);
    expect(stopped.json()).toEqual({ stopped: true });
    const done = await stream.done;
    expect(done.events.at(-1)?.data["reason"]).toBe("interrupted");
    expect(isRunning(pid)).toBe(false);
    expect((await client.send("POST", `/api/chat/${session}/stop`)).json()).toEqual({ stopped: false });
  });
});
