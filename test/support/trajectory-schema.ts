/**
 * A JSON Schema of Python Hermes's batch trajectory line (docs `developer-guide/trajectory-format.md`,
 * `batch_runner.py`): the fields, their types, the ShareGPT roles, and the text shape of each turn
 * (`<think>` first on every gpt turn, `<tool_response>` blocks in tool turns, the function-calling
 * system message). `checkTrajectoryLine` validates a parsed line with ajv and returns the errors.
 */
import { Ajv } from "ajv";

const counts = {
  type: "object",
  required: ["count", "success", "failure"],
  additionalProperties: false,
  properties: {
    count: { type: "integer", minimum: 0 },
    success: { type: "integer", minimum: 0 },
    failure: { type: "integer", minimum: 0 },
  },
} as const;

export const BATCH_TRAJECTORY_SCHEMA = {
  type: "object",
  required: [
    "prompt_index",
    "conversations",
    "metadata",
    "completed",
    "partial",
    "api_calls",
    "toolsets_used",
    "tool_stats",
    "tool_error_counts",
  ],
  properties: {
    prompt_index: { type: "integer", minimum: 0 },
    conversations: {
      type: "array",
      minItems: 3,
      // The first two turns (draft-07 tuple form): the system message, then the prompt.
      allOf: [
        {
          items: [
            {
              type: "object",
              properties: {
                from: { const: "system" },
                value: {
                  type: "string",
                  pattern: "^You are a function calling AI model\\.[\\s\\S]*<tools>\\n\\[",
                },
              },
            },
            { type: "object", properties: { from: { const: "human" } } },
          ],
        },
      ],
      items: {
        type: "object",
        required: ["from", "value"],
        additionalProperties: false,
        properties: { from: { enum: ["system", "human", "gpt", "tool"] }, value: { type: "string" } },
        // Each role's text shape (a discriminated union on "from").
        oneOf: [
          { properties: { from: { enum: ["system", "human"] } } },
          { properties: { from: { const: "gpt" }, value: { pattern: "^<think>\\n" } } },
          {
            properties: {
              from: { const: "tool" },
              value: { pattern: "^<tool_response>\\n\\{[\\s\\S]*\\}\\n</tool_response>$" },
            },
          },
        ],
      },
    },
    metadata: {
      type: "object",
      required: ["batch_num", "timestamp", "model"],
      properties: {
        batch_num: { type: "integer", minimum: 0 },
        timestamp: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}T" },
        model: { type: "string", minLength: 1 },
      },
    },
    completed: { type: "boolean" },
    partial: { type: "boolean" },
    api_calls: { type: "integer", minimum: 0 },
    toolsets_used: { type: "array", items: { type: "string" } },
    tool_stats: { type: "object", additionalProperties: counts },
    tool_error_counts: { type: "object", additionalProperties: { type: "integer", minimum: 0 } },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(BATCH_TRAJECTORY_SCHEMA);

/** Errors of one parsed line against the schema, plus the JSON inside every tag; [] when valid. */
export function checkTrajectoryLine(entry: unknown): string[] {
  const errors: string[] = [];
  if (!validate(entry)) {
    for (const e of validate.errors ?? []) errors.push(`${e.instancePath} ${e.message ?? ""}`);
    return errors;
  }
  const turns = (entry as { conversations: { from: string; value: string }[] }).conversations;
  for (const [i, turn] of turns.entries()) {
    // The system message's example call is a template (`{'name': <function-name>, ...}`), not JSON.
    if (turn.from === "system") continue;
    for (const tag of ["tool_call", "tool_response"]) {
      for (const m of turn.value.matchAll(new RegExp(`<${tag}>\\n([\\s\\S]*?)\\n</${tag}>`, "g"))) {
        try {
          const body = JSON.parse(m[1]!) as Record<string, unknown>;
          const need = tag === "tool_call" ? ["name", "arguments"] : ["tool_call_id", "name", "content"];
          for (const key of need) if (!(key in body)) errors.push(`turn ${i}: <${tag}> lacks "${key}"`);
        } catch {
          errors.push(`turn ${i}: <${tag}> does not hold JSON`);
        }
      }
    }
  }
  return errors;
}
