/**
 * `hermes acp` end to end: the official ACP SDK's client spawns the built CLI against the fake
 * LLM and runs editor sessions: a streamed answer with reasoning, edits shown as ACP diffs, a
 * dangerous command allowed and one denied in the editor, a running command cancelled (its
 * process is gone), the session loaded again in a new process with its history replayed, and
 * listed by `hermes sessions list` with source acp.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionNotification } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { type AcpHarness, answerTitles, pick, startAcp } from "../support/acp-client.js";
import { fakeProviderConfig, runHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

const update = (n: SessionNotification) => n.update;

function toolUpdates(acp: AcpHarness, toolCallId: string) {
  return acp.updates.map(update).filter((u) => "toolCallId" in u && u.toolCallId === toolCallId);
}

function text(
  acp: AcpHarness,
  kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk",
  from = 0,
): string {
  return acp.updates
    .slice(from)
    .map(update)
    .filter((u) => u.sessionUpdate === kind)
    .map((u) => {
      const content = "content" in u && !Array.isArray(u.content) ? u.content : undefined;
      return content && content.type === "text" ? content.text : "";
    })
    .join("");
}

/** The last tool result the model was sent. */
function lastToolResult(): string {
  const body = llm.chatRequests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
  const tool = body.messages.filter((m) => m.role === "tool").at(-1);
  return typeof tool?.content === "string" ? tool.content : JSON.stringify(tool?.content);
}

describe("hermes acp (built CLI, official ACP client)", () => {
  it("runs an editor session end to end, then loads it in a new process and lists it", {
    timeout: 90_000,
  }, async () => {
    answerTitles(llm);
    const { home, cwd } = tempHome(fakeProviderConfig(llm.url));
    const acp = await startAcp({ home, cwd });
    let sessionId = "";
    try {
      const init = await acp.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      expect(init.agentCapabilities?.loadSession).toBe(true);
      expect(init.agentCapabilities?.promptCapabilities?.image).toBe(true);
      expect(init.authMethods).toEqual([]);

      const created = await acp.agent.request("session/new", { cwd, mcpServers: [] });
      sessionId = created.sessionId;
      const model = created.configOptions?.find((o) => o.id === "model");
      expect(model && "currentValue" in model ? model.currentValue : undefined).toBe("fake-model");

      // 1. A streamed answer with reasoning, after a write_file shown as a diff of a new file.
      llm.enqueue(
        reply()
          .reasoning("The user wants a notes file.")
          .toolCall("write_file", { path: "notes.txt", content: "hello\n" }, "call-write"),
        reply().text("Wrote notes.txt for you."),
      );
      const first = await acp.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "write a notes file" }],
      });
      expect(first.stopReason).toBe("end_turn");
      expect(text(acp, "agent_thought_chunk")).toContain("The user wants a notes file.");
      expect(text(acp, "agent_message_chunk")).toContain("Wrote notes.txt for you.");
      const write = toolUpdates(acp, "call-write");
      expect(write[0]).toMatchObject({ sessionUpdate: "tool_call", kind: "edit", status: "in_progress" });
      expect(write[0]).toMatchObject({ locations: [{ path: join(cwd, "notes.txt") }] });
      expect(write.at(-1)).toMatchObject({
        sessionUpdate: "tool_call_update",
        status: "completed",
        content: [{ type: "diff", path: join(cwd, "notes.txt"), oldText: null, newText: "hello\n" }],
      });

      // 2. A patch: the diff holds the file before and after.
      llm.enqueue(
        reply().toolCall(
          "patch",
          { path: "notes.txt", old_string: "hello", new_string: "goodbye" },
          "call-patch",
        ),
        reply().text("Patched."),
      );
      await acp.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "change it" }] });
      expect(toolUpdates(acp, "call-patch").at(-1)).toMatchObject({
        status: "completed",
        content: [{ type: "diff", path: join(cwd, "notes.txt"), oldText: "hello\n", newText: "goodbye\n" }],
      });
      expect(readFileSync(join(cwd, "notes.txt"), "utf8")).toBe("goodbye\n");

      // 3. A dangerous command is asked about in the editor; "allow once" runs it.
      mkdirSync(join(cwd, "build"));
      writeFileSync(join(cwd, "build", "out.o"), "x");
      acp.answerNext(pick("allow_once"));
      llm.enqueue(
        reply().toolCall("terminal", { command: "rm -rf build" }, "call-rm"),
        reply().text("Removed."),
      );
      await acp.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "clean the build" }],
      });
      expect(acp.permissions).toHaveLength(1);
      expect(acp.permissions[0]?.options.map((o) => o.optionId)).toEqual([
        "allow_once",
        "allow_session",
        "allow_always",
        "deny",
      ]);
      expect(JSON.stringify(acp.permissions[0]?.toolCall)).toContain("rm -rf build");
      expect(existsSync(join(cwd, "build"))).toBe(false);
      expect(toolUpdates(acp, "call-rm")[0]).toMatchObject({
        kind: "execute",
        title: "terminal: rm -rf build",
      });

      // 4. Denied in the editor: the command does not run and the model reads the denial.
      mkdirSync(join(cwd, "keep"));
      acp.answerNext(pick("deny"));
      llm.enqueue(
        reply().toolCall("terminal", { command: "rm -rf keep" }, "call-deny"),
        reply().text("Left it."),
      );
      await acp.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "remove keep" }],
      });
      expect(acp.permissions).toHaveLength(2);
      expect(existsSync(join(cwd, "keep"))).toBe(true);
      expect(lastToolResult()).toMatch(/denied|not approved/i);
      expect(toolUpdates(acp, "call-deny").at(-1)).toMatchObject({ status: "failed" });

      // 5. Cancel while a command runs: the turn stops as cancelled and the command's process is gone.
      llm.enqueue(
        reply().toolCall(
          "terminal",
          { command: "sleep 60 & echo $! > sleeper.pid; echo started; wait" },
          "call-sleep",
        ),
      );
      const prompt = acp.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "wait a minute" }],
      });
      await acp.waitForUpdate((n) => {
        const u = n.update;
        return (
          u.sessionUpdate === "tool_call_update" &&
          u.toolCallId === "call-sleep" &&
          JSON.stringify(u.content ?? "").includes("started")
        );
      });
      const pid = Number(readFileSync(join(cwd, "sleeper.pid"), "utf8").trim());
      expect(existsSync(`/proc/${pid}`)).toBe(true);
      await acp.agent.notify("session/cancel", { sessionId });
      expect((await prompt).stopReason).toBe("cancelled");
      await expect
        .poll(() => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z "))
        .toBe(false);

      // The editor lists the session.
      const listed = await acp.agent.request("session/list", {});
      expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId);
      expect(listed.sessions.find((s) => s.sessionId === sessionId)?.cwd).toBe(cwd);
    } finally {
      expect(await acp.close()).toBe(0);
    }

    // A new process loads the session: its history is replayed before the answer.
    const again = await startAcp({ home, cwd });
    try {
      await again.agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
      await again.agent.request("session/load", { sessionId, cwd, mcpServers: [] });
      expect(text(again, "user_message_chunk")).toContain("write a notes file");
      expect(text(again, "agent_message_chunk")).toContain("Wrote notes.txt for you.");
      const replayed = toolUpdates(again, "call-write");
      expect(replayed[0]).toMatchObject({ sessionUpdate: "tool_call", kind: "edit" });
      // And continues: the model gets the earlier conversation.
      llm.enqueue(reply().text("Still here."));
      const from = again.updates.length;
      await again.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: "are you there?" }],
      });
      expect(text(again, "agent_message_chunk", from)).toBe("Still here.");
      const body = JSON.stringify(llm.chatRequests.at(-1)?.body);
      expect(body).toContain("write a notes file");
    } finally {
      expect(await again.close()).toBe(0);
      llm.respondWith(undefined);
    }

    // The CLI resumes the editor's session.
    llm.enqueue(reply().text("Resumed in the terminal."));
    const resumed = await runHermes(["-r", sessionId, "-z", "and now from the CLI"], { home, cwd });
    expect(resumed.stdout.trim()).toBe("Resumed in the terminal.");
    expect(JSON.stringify(llm.chatRequests.at(-1)?.body)).toContain("write a notes file");

    const list = await runHermes(["sessions", "list"], { home, cwd });
    expect(list.code).toBe(0);
    const row = list.stdout.split("\n").find((l) => l.includes(sessionId.slice(0, 15)));
    expect(row).toBeDefined();
    expect(row).toContain("acp");
  });
});
