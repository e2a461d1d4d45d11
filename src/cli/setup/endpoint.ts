/**
 * The endpoint checks live in ai/endpoint.ts so the REPL's `/model` (src/commands/) asks for an
 * address with the same normalisation as the wizard; re-exported here for the setup flows.
 */
export * from "../../ai/endpoint.js";
