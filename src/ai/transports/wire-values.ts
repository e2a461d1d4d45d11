/** Narrowing helpers for provider JSON, shared by the transports' converters and assemblers. */

export type Obj = Record<string, unknown>;

/** `value` when it is a plain object (not null, not an array). */
export function asRecord(value: unknown): Obj | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Obj) : undefined;
}

/** `value` when it is a string. */
export function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** `value` truncated to an integer when it is a finite number. */
export function int(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? Math.trunc(value) : undefined;
}

/** `value` floored when it is a finite number above zero (a token budget, a max_tokens). */
export function positiveInt(value: number | undefined): number | undefined {
  if (value === undefined || !Number.isFinite(value)) return undefined;
  const n = Math.floor(value);
  return n > 0 ? n : undefined;
}
