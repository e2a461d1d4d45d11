/**
 * `/api/gateway…`, `/api/pairing…`, `/api/allowlists`, `/api/webhooks`: the running gateway's live
 * state over its control socket (`state/gateway-control.ts`; never an import of `gateway/`), and
 * the stores it reads: the pairing store here, the allowlists and webhook subscriptions in
 * api-gateway-lists.ts. On a PostgreSQL home the pending approvals are every instance's, read from
 * and answered through the database, whether or not a gateway runs on this machine.
 */

import { PairingStore, PairingUsageError, pairingRecords } from "../state/gateway/pairing.js";
import { PairingFileError } from "../state/gateway/pairing-files.js";
import { ApprovalAnswerError, type PendingApprovalRecords } from "../state/gateway/shared-approvals.js";
import { type ApprovalAnswer, connectGatewayControl, type GatewayControl } from "../state/gateway-control.js";
import { readGatewayConversations } from "../state/gateway-sessions.js";
import { type GatewayListDeps, gatewayListRoutes } from "./api-gateway-lists.js";
import { ApiError, field, type Route } from "./http.js";

export interface GatewayDeps extends GatewayListDeps {
  /** Every instance's pending approvals (the PostgreSQL backend's); absent for one machine. */
  approvals?: PendingApprovalRecords;
}

const ANSWERS: readonly ApprovalAnswer[] = ["once", "session", "always", "deny"];

async function withControl<T>(home: string, fn: (control: GatewayControl) => Promise<T>): Promise<T | null> {
  const control = await connectGatewayControl(home);
  if (!control) return null;
  try {
    return await fn(control);
  } finally {
    control.close();
  }
}

async function pairingCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof PairingUsageError) throw new ApiError(400, error.message);
    if (error instanceof PairingFileError) throw new ApiError(503, error.message);
    throw error;
  }
}

export function gatewayRoutes(deps: GatewayDeps): Route[] {
  const pairing = () => deps.pairing ?? pairingRecords(new PairingStore({ home: deps.home }));
  return [
    {
      method: "GET",
      path: "/api/gateway",
      summary:
        "the running gateway's live state (platforms, running turns, pending approvals) over its control socket; running: false when none",
      handler: async () => {
        const shared = deps.approvals;
        const live = await withControl(deps.home, async (control) => {
          const status = await control.call("status", {}, { timeoutMs: 5000 });
          const { approvals } = shared
            ? { approvals: await shared.list() }
            : await control.call("approvals.list", {}, { timeoutMs: 5000 });
          return { status, approvals };
        });
        const conversations = readGatewayConversations(deps.home).length;
        if (!live) {
          // No gateway on this machine; other instances may still wait for answers.
          if (shared) return { json: { running: false, conversations, approvals: await shared.list() } };
          return { json: { running: false, conversations } };
        }
        return { json: { running: true, ...live.status, approvals: live.approvals, conversations } };
      },
    },
    {
      method: "POST",
      path: "/api/gateway/approvals/:id",
      summary:
        'answer a pending approval of the running gateway: {"decision": "once" | "session" | "always" | "deny"}',
      handler: async ({ params, body }) => {
        const decision = field(body, "decision") as ApprovalAnswer;
        if (!ANSWERS.includes(decision))
          throw new ApiError(400, `decision must be one of ${ANSWERS.join(", ")}`);
        const id = params["id"] ?? "";
        if (deps.approvals) {
          // Recorded for the instance whose turn waits on it, which carries it out.
          try {
            await deps.approvals.answer(id, decision, "dashboard");
          } catch (error) {
            if (error instanceof ApprovalAnswerError) throw new ApiError(409, error.message);
            throw error;
          }
          return { json: { id, decision, resolved: true } };
        }
        const answered = await withControl(deps.home, (control) =>
          control.call("approvals.respond", { id, decision }, { timeoutMs: 5000 }),
        );
        if (!answered) throw new ApiError(409, "no gateway is running for this home");
        return { json: answered };
      },
    },
    {
      method: "GET",
      path: "/api/pairing",
      summary: "pending pairing requests (never their codes) and approved users, per platform",
      handler: async () => ({ json: await pairingCall(() => pairing().list()) }),
    },
    {
      method: "POST",
      path: "/api/pairing/approve",
      summary:
        'approve the user who was given a code: {"platform", "code"} (wrong codes count toward the lockout)',
      handler: async ({ body }) => {
        const result = await pairingCall(() =>
          pairing().approve(field(body, "platform"), field(body, "code")),
        );
        return {
          json: result,
          status: result.status === "approved" ? 200 : result.status === "locked_out" ? 429 : 422,
        };
      },
    },
    {
      method: "POST",
      path: "/api/pairing/deny",
      summary: 'refuse a pending request: {"platform", "request_id"} (from GET /api/pairing)',
      handler: async ({ body }) => {
        const denied = await pairingCall(() =>
          pairing().deny(field(body, "platform"), field(body, "request_id")),
        );
        if (!denied) throw new ApiError(404, "no live pending request with that id on that platform");
        return { json: { denied: true } };
      },
    },
    {
      method: "POST",
      path: "/api/pairing/revoke",
      summary: 'remove an approved user: {"platform", "user_id"}',
      handler: async ({ body }) => {
        const revoked = await pairingCall(() =>
          pairing().revoke(field(body, "platform"), field(body, "user_id")),
        );
        if (!revoked) throw new ApiError(404, "that user is not approved on that platform");
        return { json: { revoked: true } };
      },
    },
    ...gatewayListRoutes(deps),
  ];
}
