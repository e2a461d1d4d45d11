/**
 * Which model ids are Anthropic Claude models, for every wire that treats them specially: prompt
 * caching through chat-completions routers, thinking and sampling rules on the Messages API, and
 * Claude-only fields on Bedrock. One rule, so a model never counts as Claude on one wire and not
 * on another.
 */

/** "anthropic" as the vendor part of an id: `anthropic/…` (routers), `anthropic.…` and `us.anthropic.…` (Bedrock). */
const ANTHROPIC_VENDOR = /(?:^|[./:])anthropic[./]/i;

/**
 * True for Claude model ids as any provider spells them: `claude-sonnet-4-5`,
 * `anthropic/claude-sonnet-4` (OpenRouter), `anthropic.claude-3-haiku-…` and
 * `us.anthropic.claude-…` (Bedrock, inference profiles included), Bedrock ARNs, and any other id
 * under the `anthropic` vendor prefix.
 */
export function isClaudeModel(model: string): boolean {
  return /claude/i.test(model) || ANTHROPIC_VENDOR.test(model);
}

/**
 * A tool input schema Claude accepts (on the Messages API and on Bedrock alike): an object schema
 * with `properties`, and no top-level oneOf/anyOf/allOf, which the API rejects.
 */
export function claudeToolSchema(schema: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!schema || typeof schema !== "object") return { type: "object", properties: {} };
  const out: Record<string, unknown> = { ...schema };
  for (const key of ["oneOf", "anyOf", "allOf"]) delete out[key];
  if (out["type"] === undefined) out["type"] = "object";
  const properties = out["properties"];
  if (
    out["type"] === "object" &&
    (typeof properties !== "object" || properties === null || Array.isArray(properties))
  ) {
    out["properties"] = {};
  }
  return out;
}
