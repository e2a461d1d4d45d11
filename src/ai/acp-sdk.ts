/**
 * The Agent Client Protocol SDK (`@agentclientprotocol/sdk`), loaded on first use. It is an ES
 * module kept outside the CLI bundle; the bundle has no dynamic-import hook for node_modules, so it
 * is required (Node 20.19+ loads ES modules through `require`). Nothing here runs at import time:
 * only `hermes acp`, a `delegate_task` with `acp_command` and the `copilot-acp` provider pay for it.
 */
import { createRequire } from "node:module";
import type * as AcpModule from "@agentclientprotocol/sdk";

export type AcpSdk = typeof AcpModule;

let cached: AcpSdk | undefined;

/** The SDK's stable (v1) entry point; the first call loads it, later calls are free. */
export function loadAcpSdk(): AcpSdk {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  cached = require("@agentclientprotocol/sdk") as AcpSdk;
  return cached;
}
