/**
 * What a webhook run does inside the gateway: a fresh agent session on the `webhook` platform
 * (restricted `hermes-webhook` toolset unless the route names its own, the route's skills loaded
 * first), and delivery of its answer to a connected platform or as a GitHub comment.
 */
import { execFile } from "node:child_process";
import { ChatSession, type ChatSessionOptions } from "../../agent/chat-session.js";
import { redactText } from "../../util/redact.js";
import type { MessageRouter } from "../messaging/router.js";
import type { WebhookRun, WebhookTarget } from "./server.js";

export interface WebhookWiring {
  /** Options shared by every session the gateway opens (config, provider, registry, store…). */
  sessionOptions: ChatSessionOptions;
  toolsets: string[];
  /** The messaging router, when any platform runs. */
  router: () => MessageRouter | undefined;
}

export function webhookRunner(wiring: WebhookWiring): (run: WebhookRun) => Promise<string> {
  return async (run) => {
    const { loadSkillMessage } = await import("../../knowledge/skills/view.js");
    const options = wiring.sessionOptions;
    const parts: string[] = [];
    for (const name of run.skills) {
      const text = await loadSkillMessage(options.home ?? "", name, options.config?.skills, {
        env: options.env ?? {},
        platform: "webhook",
      });
      if (text === undefined) throw new Error(`skill "${name}" of route ${run.route} is not installed`);
      parts.push(text);
    }
    parts.push(run.prompt);
    const session = await ChatSession.open({
      ...options,
      toolsets: run.toolsets ?? wiring.toolsets,
      platform: "webhook",
      source: "webhook",
      title: undefined,
    });
    try {
      const result = await session.agent.run(parts.join("\n\n")).result;
      if (result.reason === "error") throw new Error(result.error ?? "the model call failed");
      return result.text;
    } finally {
      await session.close("webhook_done");
    }
  };
}

function ghComment(repo: string, number: number, body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(
      "gh",
      ["pr", "comment", String(number), "--repo", repo, "--body", body],
      { timeout: 60_000 },
      (error, _stdout, stderr) => {
        if (!error) return resolve();
        const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
        reject(
          new Error(
            missing
              ? "github_comment needs the GitHub CLI (`gh`) installed and logged in"
              : `gh pr comment failed: ${String(stderr).trim() || error.message}`,
          ),
        );
      },
    );
  });
}

export function webhookDeliverer(
  wiring: WebhookWiring,
): (target: WebhookTarget, text: string) => Promise<void> {
  return async (target, text) => {
    if (target.platform === "github_comment") {
      if (!target.github) throw new Error("github_comment needs the repository and number from the payload");
      await ghComment(target.github.repo, target.github.number, redactText(text));
      return;
    }
    const router = wiring.router();
    if (!router)
      throw new Error(`the ${target.platform} platform is not connected (no messaging platform runs)`);
    await router.deliver(
      target.platform,
      {
        ...(target.chatId ? { chatId: target.chatId } : {}),
        ...(target.threadId ? { threadId: target.threadId } : {}),
      },
      text,
    );
  };
}
