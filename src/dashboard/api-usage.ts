/**
 * `/api/usage`: the insights data (`hermes insights`) over time for the Usage page's charts.
 */
import type { SessionStore } from "../state/types.js";
import { intParam, type Route } from "./http.js";

export function usageRoutes(store: SessionStore): Route[] {
  return [
    {
      method: "GET",
      path: "/api/usage",
      summary:
        "usage over time (the insights data): tokens, cost, tool calls and sessions by model, source and day (days ≤ 3650, source)",
      handler: ({ query }) => {
        const days = intParam(query, "days", 30, 3650);
        const source = query.get("source") || undefined;
        return { json: store.insights({ days: Math.max(1, days), ...(source ? { source } : {}) }) };
      },
    },
  ];
}
