/**
 * Runs one process in an environment that reports whether its stdin and stdout are a terminal and
 * the terminal's size: how each backend's pty tests prove a program really got one, of the size asked.
 */
import type { Environment } from "../../src/environments/types.js";

export async function ptyProbe(
  env: Environment,
  cwd: string,
  size?: { cols: number; rows: number },
): Promise<string> {
  const proc = await env.spawn("[ -t 0 ] && [ -t 1 ] && echo has-tty || echo no-tty; stty size", {
    cwd,
    ...(size ? { pty: size } : {}),
  });
  let text = "";
  proc.output.on("data", (chunk: Buffer | string) => {
    text += String(chunk);
  });
  await proc.exited;
  return text;
}
