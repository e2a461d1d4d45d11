/**
 * Approvals and per-chat toggles across two real `hermes gateway run` processes sharing one
 * PostgreSQL (issue 27: "approvals and /stop reach the instance running the turn"). WhatsApp Cloud
 * is served by both instances; the test plays the load balancer and picks the webhook.
 *
 * - A dangerous command waits for approval on instance A. Instance B's control socket lists it
 *   (with A as the instance that waits), `hermes gateway status` on B counts and lists it, and an
 *   answer given through B's socket runs the command on A: the directory is gone and the chat gets
 *   the model's final answer. An answer recorded straight in the database (what `hermes mcp serve`
 *   and the dashboard do where no gateway runs) reaches A as well.
 * - `/yolo`, `/verbose` and `/voice` sent through A hold when the chat's next message is taken by
 *   B: B runs the dangerous command without asking, shows tool progress and reports the voice mode. B's own event log shows it ran
 *   that turn itself (a message forwarded to A would not appear there).
 */
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { liveTools } from "../../src/cli/commands/mcp-serve-live.js";
import type { SharedApprovalInfo } from "../../src/state/gateway/shared-approvals.js";
import { connectGatewayControl, type GatewayControl } from "../../src/state/gateway-control.js";
import { runHermes } from "../support/cli.js";
import { type FakeLlm, reply, startFakeLlm } from "../support/fake-llm.js";
import { type FakeWhatsAppCloud, startFakeWhatsAppCloud } from "../support/fake-whatsapp-cloud.js";
import {
  type ClusterSetup,
  clusterHome,
  type GatewayCluster,
  startCluster,
  waitUntil,
} from "../support/gateway-cluster.js";
import { type PostgresFixture, postgresSkipReason, startPostgres } from "../support/postgres.js";
import { whatsappClusterSetup } from "../support/whatsapp-cluster.js";

let pg: PostgresFixture;
let llm: FakeLlm;
let wa: FakeWhatsAppCloud;
let cluster: GatewayCluster;
let setup: ClusterSetup;
let webhooks: string[] = [];

beforeAll(async () => {
  if (postgresSkipReason) return;
  pg = await startPostgres();
  llm = await startFakeLlm();
  wa = await startFakeWhatsAppCloud();
  const cloud = whatsappClusterSetup(wa, {
    databaseUrl: await pg.createDatabase(),
    llmUrl: llm.url,
    config: 'display:\n  tool_progress: "off"\napprovals:\n  timeout: 120\n',
  });
  setup = cloud.setup;
  webhooks = cloud.webhooks;
  cluster = await startCluster(setup, 2);
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await wa?.stop();
  await llm?.close();
  await pg?.dispose();
}, 60_000);

async function control(index: number): Promise<GatewayControl> {
  const found = await connectGatewayControl(cluster.instances[index]!.home);
  if (!found) throw new Error(`instance ${index} has no control socket`);
  return found;
}

/** The instance id of cluster instance `index`, from the live instances list. */
async function instanceId(index: number): Promise<string> {
  const { instances } = await cluster.status();
  const id = instances.find((i) => i.pid === cluster.instances[index]!.pid)?.id;
  if (!id) throw new Error(`instance ${index} is not listed`);
  return id;
}

/** Until no instance holds a chat (the last turn's claim was given back). */
async function chatsFree(): Promise<void> {
  await waitUntil(
    async () => (await cluster.status()).instances.every((i) => (i.chats ?? 0) === 0),
    "every chat claim released",
  );
}

const victimDir = () => {
  const dir = join(mkdtempSync(join(tmpdir(), "hermes-approval-")), "cache");
  mkdirSync(dir);
  return dir;
};

describe.skipIf(postgresSkipReason)("approvals and chat toggles across two instances", () => {
  it("an approval waiting on A is listed by B and answered through B", async () => {
    const user = "15550000001";
    const victim = victimDir();
    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${victim}` }),
      reply().text("Cache cleared."),
    );
    await wa.deliver(webhooks[0]!, user, { type: "text", text: { body: "clear the cache" } });
    await wa.waitFor((m) => m.to === user && m.text.includes("Approval needed"), 30_000);

    const a = await instanceId(0);
    const b = await control(1);
    try {
      // Recorded as the question goes to the chat: listed within moments of it.
      const approvals = await waitUntil(async () => {
        const listed = (await b.call("approvals.list", {})).approvals;
        return listed.length > 0 && listed;
      }, "A's approval listed through B");
      expect(approvals).toHaveLength(1);
      expect(approvals[0]).toMatchObject({ instance: a, platform: "whatsapp_cloud", chat_id: user });
      expect(approvals[0]?.command).toContain(victim);
      expect((await b.call("status", {})).pending_approvals).toBe(1);

      // `hermes gateway status` on B's home lists it with the instance that waits.
      const status = await runHermes(["gateway", "status"], {
        home: cluster.instances[1]!.home,
        cwd: cluster.instances[1]!.cwd,
      });
      expect(status.stdout).toContain("Pending approvals (all instances): 1");
      expect(status.stdout).toContain(`${approvals[0]?.id}  on ${a}`);

      // A confused caller: approving a made-up id, or with a word that is not a decision.
      await expect(b.call("approvals.respond", { id: "00000000", decision: "once" })).rejects.toThrow(
        /No pending approval/,
      );
      await expect(
        b.call("approvals.respond", { id: approvals[0]!.id, decision: "yes" as never }),
      ).rejects.toThrow(/decision must be/);
      expect(existsSync(victim)).toBe(true);

      const answered = await b.call("approvals.respond", { id: approvals[0]!.id, decision: "once" });
      expect(answered).toMatchObject({ resolved: true });
    } finally {
      b.close();
    }
    await wa.waitFor((m) => m.to === user && m.text.includes("Cache cleared."), 30_000);
    expect(existsSync(victim)).toBe(false);
    const again = await control(1);
    try {
      expect((await again.call("approvals.list", {})).approvals).toEqual([]);
    } finally {
      again.close();
    }
    await chatsFree();
  }, 90_000);

  it("an answer recorded in the database where no gateway runs reaches the waiting instance", async () => {
    const user = "15550000002";
    const victim = victimDir();
    llm.enqueue(
      reply().toolCall("terminal", { command: `rm -rf ${victim}` }),
      reply().text("Left it alone."),
    );
    await wa.deliver(webhooks[1]!, user, { type: "text", text: { body: "clear my cache" } });
    await wa.waitFor((m) => m.to === user && m.text.includes("Approval needed"), 30_000);
    // `hermes mcp serve`'s tools on a home with the cluster's config where no gateway runs.
    const outside = clusterHome(setup);
    const tools = new Map(liveTools(outside.home).map((t) => [t.name, t]));
    const listed = await waitUntil(async () => {
      const open = (await tools.get("permissions_list_open")?.run({})) as {
        count: number;
        approvals: SharedApprovalInfo[];
      };
      return open.count > 0 && open;
    }, "the approval listed by mcp serve's tool");
    expect(listed.count).toBe(1);
    expect(listed.approvals[0]).toMatchObject({ chat_id: user, instance: await instanceId(1) });
    const id = listed.approvals[0]?.id ?? "";
    const respond = tools.get("permissions_respond")!;
    await expect(respond.run({ id: "ffffffff", decision: "deny" })).rejects.toThrow(/No pending approval/);
    await expect(respond.run({ id, decision: "approve it!" })).rejects.toThrow(/Invalid decision/);
    expect(await respond.run({ id, decision: "deny" })).toMatchObject({ resolved: true, approval_id: id });
    await wa.waitFor((m) => m.to === user && m.text.includes("Left it alone."), 30_000);
    expect(existsSync(victim)).toBe(true);
    const denied = llm.chatRequests.at(-1)?.body as { messages?: Array<{ role: string; content: unknown }> };
    expect(JSON.stringify(denied.messages?.filter((m) => m.role === "tool"))).toMatch(/denied|not approved/i);
    await chatsFree();
  }, 90_000);

  it("/yolo, /verbose and /voice given through A hold when B takes the chat's next message", async () => {
    const user = "15550000003";
    await wa.deliver(webhooks[0]!, user, { type: "text", text: { body: "/yolo" } });
    await wa.waitFor((m) => m.to === user && /YOLO/.test(m.text), 30_000);
    await wa.deliver(webhooks[0]!, user, { type: "text", text: { body: "/verbose" } });
    await wa.waitFor((m) => m.to === user && /Tool progress/.test(m.text), 30_000);
    await wa.deliver(webhooks[0]!, user, { type: "text", text: { body: "/voice on" } });
    await wa.waitFor((m) => m.to === user && /Voice replies are on/.test(m.text), 30_000);
    await chatsFree();

    const b = await control(1);
    let cursor = 0;
    try {
      cursor = (await b.call("events.poll", { limit: 500 })).next_cursor;
    } finally {
      b.close();
    }
    const victim = victimDir();
    llm.enqueue(reply().toolCall("terminal", { command: `rm -rf ${victim}` }), reply().text("Removed it."));
    await wa.deliver(webhooks[1]!, user, { type: "text", text: { body: "remove the cache dir" } });
    await wa.waitFor((m) => m.to === user && m.text.includes("Removed it."), 30_000);
    expect(existsSync(victim)).toBe(false);
    const toUser = wa.sent.filter((m) => m.to === user).map((m) => m.text);
    // Never asked (YOLO), and the tool's progress line was shown (verbose).
    expect(toUser.some((t) => t.includes("Approval needed"))).toBe(false);
    expect(toUser.some((t) => t.includes("terminal") && t.includes("rm -rf"))).toBe(true);
    // B ran that turn itself: its own event log has the message in and the answer out.
    const again = await control(1);
    try {
      const { events } = await again.call("events.poll", { after_cursor: cursor, limit: 500 });
      const mine = events.filter((e) => e.type === "message" && e["chat_id"] === user);
      expect(mine.map((e) => e["direction"])).toEqual(expect.arrayContaining(["in", "out"]));
    } finally {
      again.close();
    }
    // The chat's /voice mode, chosen through A, is what B reports.
    await chatsFree();
    await wa.deliver(webhooks[1]!, user, { type: "text", text: { body: "/voice status" } });
    await wa.waitFor((m) => m.to === user && /Voice mode: on/.test(m.text), 30_000);
  }, 90_000);
});
