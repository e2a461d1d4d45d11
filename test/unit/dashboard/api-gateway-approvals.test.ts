/**
 * The dashboard's approvals on a PostgreSQL home (several instances): `GET /api/gateway` lists
 * every instance's pending approvals even when no gateway runs on the dashboard's machine, and
 * `POST /api/gateway/approvals/:id` records the answer for the instance that waits; an answer the
 * store refuses (unknown id, a protected path approved from outside) is a 409 with its reason, and
 * a decision that is not one is a 400 before the store is asked.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gatewayRoutes } from "../../../src/dashboard/api-gateway.js";
import { ApiError, type ApiRequest, type Route } from "../../../src/dashboard/http.js";
import {
  ApprovalAnswerError,
  type PendingApprovalRecords,
  type SharedApprovalInfo,
} from "../../../src/state/gateway/shared-approvals.js";
import type { ApprovalAnswer } from "../../../src/state/gateway-control.js";

const pending: SharedApprovalInfo = {
  id: "a1b2c3d4",
  instance: "db1-4242-abcdef",
  session_key: "agent:main:telegram:dm:7",
  platform: "telegram",
  chat_id: "7",
  user_id: "7",
  command: "rm -rf /srv/cache",
  reason: "recursive delete",
  protected_path: false,
  created_at: "2026-11-27T05:00:00.000Z",
  expires_at: "2026-11-27T05:01:00.000Z",
};

function records(): PendingApprovalRecords & { answered: Array<[string, ApprovalAnswer, string]> } {
  const answered: Array<[string, ApprovalAnswer, string]> = [];
  return {
    answered,
    add: async () => undefined,
    remove: async () => undefined,
    clear: async () => undefined,
    answers: async () => [],
    list: async () => (answered.length ? [] : [pending]),
    answer: async (id, decision, by) => {
      if (id !== pending.id) throw new ApprovalAnswerError(`No pending approval with id "${id}".`);
      answered.push([id, decision, by]);
      return { instance: pending.instance };
    },
  };
}

function routes(approvals: PendingApprovalRecords): Route[] {
  // A home where no gateway runs: no control socket answers.
  const home = mkdtempSync(join(tmpdir(), "hermes-dash-approvals-"));
  return gatewayRoutes({
    home,
    env: () => ({}),
    baseEnv: {},
    config: () => ({}) as never,
    onChange: () => undefined,
    approvals,
  });
}

const call = (all: Route[], method: string, path: string, req: Partial<ApiRequest> = {}) => {
  const route = all.find((r) => r.method === method && r.path === path);
  if (!route) throw new Error(`no route ${method} ${path}`);
  return route.handler({ params: {}, query: new URLSearchParams(), body: {}, ...req } as ApiRequest);
};

describe("the dashboard's approvals across instances", () => {
  it("lists every instance's approvals when no gateway runs on this machine", async () => {
    const result = (await call(routes(records()), "GET", "/api/gateway")) as {
      json: Record<string, unknown>;
    };
    expect(result.json).toMatchObject({ running: false, approvals: [pending] });
  });

  it("records an answer for the instance that waits", async () => {
    const store = records();
    const all = routes(store);
    const result = await call(all, "POST", "/api/gateway/approvals/:id", {
      params: { id: pending.id },
      body: { decision: "session" },
    });
    expect(result).toEqual({ json: { id: pending.id, decision: "session", resolved: true } });
    expect(store.answered).toEqual([[pending.id, "session", "dashboard"]]);
  });

  it("answers a refused answer with 409 and its reason, a made-up decision with 400", async () => {
    const store = records();
    const all = routes(store);
    const refused = call(all, "POST", "/api/gateway/approvals/:id", {
      params: { id: "00000000" },
      body: { decision: "once" },
    });
    await expect(refused).rejects.toBeInstanceOf(ApiError);
    await expect(refused).rejects.toMatchObject({ status: 409, message: /No pending approval/ });
    for (const decision of ["yes", "ONCE", "once; DROP TABLE x", ""]) {
      await expect(
        call(all, "POST", "/api/gateway/approvals/:id", { params: { id: pending.id }, body: { decision } }),
      ).rejects.toMatchObject({ status: 400 });
    }
    expect(store.answered).toEqual([]);
  });
});
