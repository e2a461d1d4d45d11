/**
 * The root of the tool system: holds tool definitions, validates arguments once with ajv, runs
 * handlers with errors captured, serialises and truncates results. Imports only util and its types.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { DEFAULT_TRUNCATE_LIMITS, type TruncateLimits, truncateOutput } from "../util/truncate.js";
import type { CheckContext, ToolContext, ToolDefinition, ToolOutcome } from "./types.js";

/** A tool definition with its handler's argument type erased, as the registry stores it. */
// biome-ignore lint/suspicious/noExplicitAny: the registry stores tools of every argument shape
export type AnyTool = ToolDefinition<any>;

export interface FunctionSchema {
  type: "function";
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

export interface RegistryOptions {
  /** Clock for the availability-check cache; injected in tests. */
  now?: () => number;
  /** How long a `check` result is trusted, in ms (default 30 s). */
  checkTtlMs?: number;
}

export class ToolRegistry {
  private readonly tools = new Map<string, AnyTool>();
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly checkCache = new Map<string, { ok: boolean; at: number }>();
  private readonly schemaCache = new Map<string, FunctionSchema[]>();
  /** Per base schema, the last configuration-described copy and its text. */
  private readonly described = new WeakMap<FunctionSchema, { description: string; schema: FunctionSchema }>();
  // validateSchema off: checking each schema against the JSON Schema meta-schema costs ~30 ms on
  // first use, and a schema ajv cannot compile is reported by `execute` anyway.
  private readonly ajv = new Ajv({
    allErrors: true,
    coerceTypes: true,
    useDefaults: true,
    strict: false,
    validateSchema: false,
  });
  private readonly now: () => number;
  private readonly checkTtlMs: number;
  private gen = 0;

  constructor(options: RegistryOptions = {}) {
    this.now = options.now ?? Date.now;
    this.checkTtlMs = options.checkTtlMs ?? 30_000;
  }

  /** Bumped on every change; cached tool definitions derived from the registry are stale after it moves. */
  get generation(): number {
    return this.gen;
  }

  /**
   * Adds a tool. Re-registering a name in the same toolset replaces it (MCP servers re-list their
   * tools); a name owned by another toolset is refused so one toolset can never shadow another's tool.
   */
  register(tool: AnyTool): void {
    const existing = this.tools.get(tool.name);
    if (existing && existing.toolset !== tool.toolset) {
      throw new Error(
        `Tool "${tool.name}" is already registered by toolset "${existing.toolset}"; ` +
          `toolset "${tool.toolset}" cannot shadow it. Rename the tool.`,
      );
    }
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
      throw new Error(`Invalid tool name "${tool.name}": use 1-64 letters, digits, "_" or "-".`);
    }
    this.tools.set(tool.name, tool);
    this.validators.delete(tool.name);
    this.checkCache.delete(tool.name);
    this.changed();
  }

  registerAll(tools: readonly AnyTool[]): void {
    for (const tool of tools) this.register(tool);
  }

  unregister(name: string): boolean {
    const removed = this.tools.delete(name);
    if (removed) {
      this.validators.delete(name);
      this.checkCache.delete(name);
      this.changed();
    }
    return removed;
  }

  get(name: string): AnyTool | undefined {
    return this.tools.get(name);
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  list(): AnyTool[] {
    return [...this.tools.values()];
  }

  /**
   * Of `names`, those registered whose required env vars are set and whose `check` passes (cached
   * for the TTL). Unknown names are skipped: toolsets may name tools that are not built here.
   */
  async available(names: readonly string[], ctx: CheckContext): Promise<string[]> {
    const result: string[] = [];
    // Tools that share a check (the eleven browser tools share one, which looks for Chromium in
    // every PATH directory) ask it once per call: the answer cannot differ for the same context.
    const asked = new Map<NonNullable<AnyTool["check"]>, boolean>();
    for (const name of names) {
      const tool = this.tools.get(name);
      if (!tool) continue;
      if (tool.requiresEnv?.some((v) => !ctx.env[v])) continue;
      if (tool.check && !(await this.cachedCheck(tool, ctx, asked))) continue;
      result.push(name);
    }
    return result;
  }

  /**
   * Function schemas for the named tools, in the given order, cached per registry generation.
   * With `ctx`, tools that describe themselves per configuration (`describe`) say so.
   */
  schemas(names: readonly string[], ctx?: CheckContext): FunctionSchema[] {
    const base = this.baseSchemas(names);
    if (!ctx) return base;
    return base.map((schema) => {
      const tool = this.tools.get(schema.function.name);
      if (!tool?.describe) return schema;
      const description = tool.describe(ctx).trim();
      // The same object while the text stays the same, so what is serialised once per schema object
      // (the request writers' JSON) is not serialised again for every session.
      const last = this.described.get(schema);
      if (last?.description === description) return last.schema;
      const described = { ...schema, function: { ...schema.function, description } };
      this.described.set(schema, { description, schema: described });
      return described;
    });
  }

  private baseSchemas(names: readonly string[]): FunctionSchema[] {
    const key = `${this.gen}:${names.join(",")}`;
    const cached = this.schemaCache.get(key);
    if (cached) return cached;
    const schemas: FunctionSchema[] = [];
    for (const name of names) {
      const tool = this.tools.get(name);
      if (!tool) continue;
      schemas.push({
        type: "function",
        function: {
          name: tool.name,
          description: tool.description.trim(),
          parameters: stripTypeBoxMarkers(tool.parameters),
        },
      });
    }
    this.schemaCache.set(key, schemas);
    return schemas;
  }

  /**
   * Validates `args`, runs the handler and returns what the model will see. Never throws:
   * validation failures, thrown errors and unknown names come back as `{"error": ...}` content.
   */
  async execute(
    name: string,
    args: Record<string, unknown>,
    ctx: ToolContext,
    limits: TruncateLimits = DEFAULT_TRUNCATE_LIMITS,
  ): Promise<ToolOutcome> {
    const tool = this.tools.get(name);
    if (!tool) return failure(`Unknown tool "${name}". Available tools: ${this.names().join(", ")}.`);
    let validate: ValidateFunction;
    try {
      validate = this.validator(tool);
    } catch (error) {
      return failure(`Tool ${name} has an invalid parameter schema and cannot run: ${String(error)}`);
    }
    if (!validate(args)) {
      return failure(`Invalid arguments for ${name}: ${formatAjvErrors(validate.errors ?? [])}.`);
    }
    let value: unknown;
    let failed = false;
    // A per-call copy, so a failure reported by one call never marks a parallel one.
    const callCtx: ToolContext = {
      ...ctx,
      reportFailure: (reason) => {
        failed = true;
        ctx.reportFailure?.(reason);
      },
    };
    try {
      value = await tool.handler(args, callCtx);
    } catch (error) {
      if (ctx.signal.aborted) return failure(`${name} was interrupted by the user.`);
      return failure(error instanceof Error ? error.message : String(error));
    }
    const serialised = serialise(value);
    const effective = {
      ...limits,
      ...(tool.maxResultChars !== undefined
        ? { maxBytes: Math.min(limits.maxBytes, tool.maxResultChars * 4) }
        : {}),
      // The per-line cap is for raw text (a minified file, a log line); cutting a line of a JSON
      // result would break the JSON the model has to read, so structured results keep their lines.
      ...(typeof value === "string" ? {} : { maxLineLength: Number.POSITIVE_INFINITY }),
    };
    let text = serialised;
    if (tool.maxResultChars !== undefined && text.length > tool.maxResultChars) {
      text = `${text.slice(0, tool.maxResultChars)}\n[output truncated: ${text.length - tool.maxResultChars} more characters]`;
    }
    const cut = truncateOutput(text, effective);
    const isError = isErrorValue(value);
    return {
      content: cut.text,
      ok: !isError,
      ...(isError ? { error: String((value as { error: unknown }).error) } : {}),
      ...(failed && !isError ? { failed: true } : {}),
      ...(cut.truncated || text !== serialised ? { truncated: true } : {}),
    };
  }

  private validator(tool: AnyTool): ValidateFunction {
    let validate = this.validators.get(tool.name);
    if (!validate) {
      validate = this.ajv.compile(stripTypeBoxMarkers(tool.parameters));
      this.validators.set(tool.name, validate);
    }
    return validate;
  }

  private async cachedCheck(
    tool: AnyTool,
    ctx: CheckContext,
    asked: Map<NonNullable<AnyTool["check"]>, boolean>,
  ): Promise<boolean> {
    const hit = this.checkCache.get(tool.name);
    const now = this.now();
    if (hit && now - hit.at < this.checkTtlMs) return hit.ok;
    const check = tool.check;
    if (!check) return true;
    let ok = asked.get(check);
    if (ok === undefined) {
      try {
        ok = Boolean(await check(ctx));
      } catch {
        ok = false;
      }
      asked.set(check, ok);
    }
    this.checkCache.set(tool.name, { ok, at: now });
    return ok;
  }

  private changed(): void {
    this.gen++;
    this.schemaCache.clear();
  }
}

function failure(message: string): ToolOutcome {
  return { content: JSON.stringify({ error: message }), ok: false, error: message };
}

function serialise(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === undefined || value === null) return JSON.stringify({ ok: true });
  try {
    return JSON.stringify(value);
  } catch (error) {
    return JSON.stringify({ error: `Tool returned a value that cannot be serialised: ${String(error)}` });
  }
}

function isErrorValue(value: unknown): boolean {
  return value !== null && typeof value === "object" && !Array.isArray(value) && "error" in value;
}

/** Readable validation errors: "`path` is required; `limit` must be integer". */
export function formatAjvErrors(errors: readonly ErrorObject[]): string {
  const parts = errors.map((e) => {
    const where = e.instancePath ? `\`${e.instancePath.slice(1).replaceAll("/", ".")}\`` : "arguments";
    if (e.keyword === "required") return `\`${String(e.params.missingProperty)}\` is required`;
    if (e.keyword === "enum") {
      return `${where} must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    }
    if (e.keyword === "additionalProperties") {
      return `unexpected property \`${String(e.params.additionalProperty)}\``;
    }
    return `${where} ${e.message ?? "is invalid"}`;
  });
  return [...new Set(parts)].join("; ");
}

/** TypeBox adds symbol-keyed metadata; providers want plain JSON Schema. */
function stripTypeBoxMarkers(schema: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}
