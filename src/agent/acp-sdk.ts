/** The ACP SDK loader lives in `ai/` (the `copilot-acp` provider uses it too); re-exported here. */
export { type AcpSdk, loadAcpSdk } from "../ai/acp-sdk.js";
