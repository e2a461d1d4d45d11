/**
 * Colours for the interactive terminal. One `Style` is made per output stream: with colour off every
 * function returns its input unchanged, so callers never branch on colour themselves.
 */
import pc from "picocolors";

export type Paint = (text: string) => string;

export interface Style {
  readonly enabled: boolean;
  bold: Paint;
  dim: Paint;
  italic: Paint;
  underline: Paint;
  strike: Paint;
  red: Paint;
  green: Paint;
  yellow: Paint;
  blue: Paint;
  magenta: Paint;
  cyan: Paint;
  gray: Paint;
}

export function createStyle(enabled: boolean): Style {
  const c = pc.createColors(enabled);
  return {
    enabled,
    bold: c.bold,
    dim: c.dim,
    italic: c.italic,
    underline: c.underline,
    strike: c.strikethrough,
    red: c.red,
    green: c.green,
    yellow: c.yellow,
    blue: c.blue,
    magenta: c.magenta,
    cyan: c.cyan,
    gray: c.gray,
  };
}

/**
 * Whether to colour `stream`: only a TTY, never with `NO_COLOR` set (any value, per no-color.org),
 * and never for `TERM=dumb`.
 */
export function colorFor(stream: { isTTY?: boolean }, env: Record<string, string | undefined>): boolean {
  if (stream.isTTY !== true) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  return env.TERM !== "dumb";
}
