/**
 * Recovers tool calls that a model wrote as text instead of structured `tool_calls`, which local
 * models served without a tool-call parser often do. Recognised forms:
 *
 * - `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Hermes/Qwen); several blocks; the
 *   last may lack its closing tag; the JSON may be fenced or an array of calls;
 * - `<function=name>{...}</function>` (Llama 3.1) and `<function=name><parameter=k>v</parameter>`
 *   (Qwen3-Coder), inside or outside a `<tool_call>` block;
 * - a reply that is nothing but one JSON call object (or an array of them), optionally fenced.
 *
 * `arguments` may also be spelled `parameters`, and may be an object or a JSON string.
 */
import { newToolCallId } from "./tool-call-id.js";
import type { ToolCall } from "./types.js";

export interface TextToolCallResult {
  calls: ToolCall[];
  /** The text with every recognised call removed; the input unchanged when nothing was found. */
  remainingText: string;
}

type Obj = Record<string, unknown>;

const TOOL_CALL_BLOCK = /<tool_call>([\s\S]*?)(?:<\/tool_call>|(?=<tool_call>)|$)/g;
const FUNCTION_BLOCK = /<function=([^>\s]+)>([\s\S]*?)(?:<\/function>|(?=<function=)|$)/g;
const PARAMETER = /<parameter=([^>\s]+)>([\s\S]*?)(?:<\/parameter>|(?=<parameter=)|(?=<\/function>)|$)/g;

/**
 * Extracts text-form tool calls. A block whose content does not parse is left in the text as it
 * was, so nothing the model wrote is lost. When `knownToolNames` is given, a bare JSON reply only
 * counts as a call if every name in it is a known tool, so an answer that happens to be JSON is
 * not hijacked; tagged blocks are explicit and are taken whatever the name (an unknown name gets
 * the usual unknown-tool error back to the model). Never throws.
 */
export function extractTextToolCalls(
  text: string,
  knownToolNames?: ReadonlySet<string>,
  newId: () => string = newToolCallId,
): TextToolCallResult {
  const calls: ToolCall[] = [];
  let rest = text;
  if (rest.includes("<tool_call>")) {
    rest = rest.replace(TOOL_CALL_BLOCK, (block, inner: string) => {
      const found = parseBlock(inner, newId);
      if (!found) return block;
      calls.push(...found);
      return "";
    });
  }
  if (rest.includes("<function=")) {
    rest = rest.replace(FUNCTION_BLOCK, (block, name: string, body: string) => {
      const call = parseFunctionBlock(name, body, newId);
      if (!call) return block;
      calls.push(call);
      return "";
    });
  }
  if (calls.length === 0) {
    const bare = parseBareJson(text, knownToolNames, newId);
    if (bare) return { calls: bare, remainingText: "" };
    return { calls, remainingText: text };
  }
  return { calls, remainingText: rest.replace(/\n{3,}/g, "\n\n").trim() };
}

function parseBlock(inner: string, newId: () => string): ToolCall[] | undefined {
  const body = stripFence(inner.trim());
  if (body.startsWith("<function=")) {
    const calls: ToolCall[] = [];
    for (const match of body.matchAll(FUNCTION_BLOCK)) {
      const call = parseFunctionBlock(match[1] ?? "", match[2] ?? "", newId);
      if (!call) return undefined;
      calls.push(call);
    }
    return calls.length > 0 ? calls : undefined;
  }
  const parsed = parseJson(body);
  const items = Array.isArray(parsed) ? parsed : [parsed];
  if (items.length === 0) return undefined;
  const calls: ToolCall[] = [];
  for (const item of items) {
    const call = callFromObject(item, false, newId);
    if (!call) return undefined;
    calls.push(call);
  }
  return calls;
}

function parseFunctionBlock(name: string, body: string, newId: () => string): ToolCall | undefined {
  const trimmed = stripFence(body.trim());
  if (trimmed === "") return makeCall(name, {}, newId);
  if (trimmed.startsWith("{")) {
    const args = asObject(parseJson(trimmed));
    return args ? makeCall(name, args, newId) : undefined;
  }
  if (!trimmed.startsWith("<parameter=")) return undefined;
  const args: Obj = {};
  for (const match of trimmed.matchAll(PARAMETER)) {
    args[match[1] ?? ""] = parameterValue(match[2] ?? "");
  }
  return makeCall(name, args, newId);
}

/**
 * A `<parameter>` value. Values that read as JSON structures, numbers, booleans or null are parsed
 * so a schema asking for those types gets them; anything else stays a string, verbatim apart from
 * the newline the format puts on each side.
 */
function parameterValue(raw: string): unknown {
  const value = raw.replace(/^\r?\n/, "").replace(/\r?\n$/, "");
  const trimmed = value.trim();
  if (/^(?:[[{]|-?\d|true$|false$|null$)/.test(trimmed)) {
    const parsed = parseJson(trimmed);
    if (parsed !== undefined) return parsed;
  }
  return value;
}

function parseBareJson(text: string, known: ReadonlySet<string> | undefined, newId: () => string) {
  const body = stripFence(text.trim());
  if (!body.startsWith("{") && !body.startsWith("[")) return undefined;
  const parsed = parseJson(body);
  const items = Array.isArray(parsed) ? parsed : [parsed];
  if (items.length === 0) return undefined;
  const calls: ToolCall[] = [];
  for (const item of items) {
    const call = callFromObject(item, true, newId);
    if (!call) return undefined;
    if (known && !known.has(call.function.name)) return undefined;
    calls.push(call);
  }
  return calls;
}

/**
 * A call from `{name, arguments | parameters}` or OpenAI's `{type, function: {name, arguments}}`.
 * With `requireArguments`, an object without an arguments key does not count: `{"name": "Ada"}`
 * is an answer, not a call.
 */
function callFromObject(
  value: unknown,
  requireArguments: boolean,
  newId: () => string,
): ToolCall | undefined {
  const outer = asObject(value);
  if (!outer) return undefined;
  const source = asObject(outer["function"]) ?? outer;
  const name = source["name"];
  if (typeof name !== "string" || name.trim() === "") return undefined;
  const key = "arguments" in source ? "arguments" : "parameters" in source ? "parameters" : undefined;
  if (!key && requireArguments) return undefined;
  const raw = key ? source[key] : undefined;
  if (raw === undefined || raw === null) return makeCall(name, {}, newId);
  if (typeof raw === "string") {
    const args = asObject(parseJson(raw));
    // A string that is not a JSON object is passed on as-is; argument validation will say why.
    return args ? makeCall(name, args, newId) : makeCallRaw(name, raw, newId);
  }
  const args = asObject(raw);
  return args ? makeCall(name, args, newId) : undefined;
}

function makeCall(name: string, args: Obj, newId: () => string): ToolCall {
  return makeCallRaw(name, JSON.stringify(args), newId);
}

function makeCallRaw(name: string, args: string, newId: () => string): ToolCall {
  return { id: newId(), type: "function", function: { name: name.trim(), arguments: args } };
}

function stripFence(text: string): string {
  const match = /^```[\w-]*[ \t]*\r?\n?([\s\S]*?)\r?\n?```$/.exec(text);
  return match ? (match[1] ?? "").trim() : text;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function asObject(value: unknown): Obj | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Obj) : undefined;
}
