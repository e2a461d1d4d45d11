/**
 * Where a cron run's output goes. The job's `deliver` string names targets (`local`, `origin`,
 * `all`, `<platform>`, `<platform>:<chat>[:<thread>]`, comma-separated); a platform delivers only
 * when the gateway has plugged in a sender for it. Until then such a target fails with a message
 * that says so, and the failure is recorded on the job; the output is on disk either way.
 */
import type { CronJob } from "../knowledge/cron/types.js";

/** One run's output on its way to the job's targets. */
export interface CronDelivery {
  job: CronJob;
  /** The text to send (the model's answer, or the failure report). */
  text: string;
  ok: boolean;
  /** The saved output file. */
  outputPath: string;
}

/** What a delivery achieved: the targets reached and one message per target that failed. */
export interface DeliveryResult {
  delivered: string[];
  errors: string[];
}

export type DeliverFn = (delivery: CronDelivery) => Promise<DeliveryResult>;

/** A connected messaging platform, as the gateway will provide it. */
export interface PlatformSender {
  /** Sends text; `chatId` undefined means the platform's home channel. Throws on failure. */
  send(target: { chatId?: string; threadId?: string; text: string }): Promise<void>;
}

export interface DeliveryTarget {
  platform: string;
  chatId?: string;
  threadId?: string;
}

/**
 * The targets a `deliver` string names. `local` contributes none (the output file is the
 * delivery); `origin` becomes the job's origin chat; `all` becomes each connected platform's home.
 */
export function resolveTargets(
  job: CronJob,
  connected: readonly string[],
): { targets: DeliveryTarget[]; errors: string[] } {
  const targets: DeliveryTarget[] = [];
  const errors: string[] = [];
  for (const raw of String(job.deliver || "local").split(",")) {
    const item = raw.trim();
    if (!item || item === "local") continue;
    if (item === "all") {
      for (const platform of connected) targets.push({ platform });
      continue;
    }
    if (item === "origin") {
      const origin = job.origin;
      if (!origin?.platform) {
        errors.push('deliver is "origin" but the job has no origin chat; its output is only saved locally.');
        continue;
      }
      targets.push({
        platform: origin.platform,
        ...(origin.chat_id != null ? { chatId: String(origin.chat_id) } : {}),
        ...(origin.thread_id != null ? { threadId: String(origin.thread_id) } : {}),
      });
      continue;
    }
    const [platform = "", chatId, threadId] = item.split(":");
    targets.push({ platform, ...(chatId ? { chatId } : {}), ...(threadId ? { threadId } : {}) });
  }
  return { targets, errors };
}

const label = (t: DeliveryTarget) => [t.platform, t.chatId, t.threadId].filter(Boolean).join(":");

/**
 * The standard delivery: `local` needs nothing more than the saved file; each other target goes
 * through the sender registered for its platform, or fails with "not connected".
 */
export function createDeliverer(senders: ReadonlyMap<string, PlatformSender> = new Map()): DeliverFn {
  return async ({ job, text, outputPath }) => {
    const { targets, errors } = resolveTargets(job, [...senders.keys()]);
    const delivered: string[] = [];
    for (const target of targets) {
      const sender = senders.get(target.platform);
      if (!sender) {
        errors.push(
          `${label(target)}: the ${target.platform} platform is not connected (no gateway is running it here); ` +
            `the output was saved to ${outputPath}.`,
        );
        continue;
      }
      try {
        await sender.send({
          ...(target.chatId ? { chatId: target.chatId } : {}),
          ...(target.threadId ? { threadId: target.threadId } : {}),
          text,
        });
        delivered.push(label(target));
      } catch (error) {
        errors.push(`${label(target)}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return { delivered, errors };
  };
}
