/**
 * A real terminal for end-to-end tests of the interactive CLI: the built `hermes` (or any argv)
 * runs inside tmux (one private tmux server per Terminal), keys are sent with `send-keys`, and the
 * screen is read with `capture-pane`. Every wait polls the screen against a deadline.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { HERMES_BIN } from "./cli.js";

/** Whether tmux is installed (tests that need it skip with this). */
export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

export class Terminal {
  private constructor(private readonly socket: string) {}

  /** Starts `hermes ARGS` in a fresh tmux server (120×40 unless sized); the shell line prints the exit status. */
  static start(options: {
    home: string;
    cwd: string;
    args?: string[];
    env?: Record<string, string>;
    /** Terminal size (default 120×40). */
    cols?: number;
    rows?: number;
  }): Terminal {
    const socket = `hermes-e2e-${process.pid}-${randomBytes(4).toString("hex")}`;
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: options.home,
      HERMES_HOME: options.home,
      TERM: "xterm-256color",
      LANG: "C.UTF-8",
      ...(options.env ?? {}),
    };
    const quote = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;
    const command = [
      "env -i",
      ...Object.entries(env).map(([k, v]) => quote(`${k}=${v}`)),
      quote(process.execPath),
      quote(HERMES_BIN),
      ...(options.args ?? []).map(quote),
      '; echo "[exit $?]"; sleep 600',
    ].join(" ");
    execFileSync("tmux", [
      "-u",
      "-L",
      socket,
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-x",
      String(options.cols ?? 120),
      "-y",
      String(options.rows ?? 40),
      "-c",
      options.cwd,
      command,
    ]);
    return new Terminal(socket);
  }

  private tmux(...args: string[]): string {
    return execFileSync("tmux", ["-u", "-L", this.socket, ...args], { encoding: "utf8" });
  }

  /** Sends keys by tmux name (`Enter`, `C-c`, `C-d`, `Tab`). */
  keys(...keys: string[]): void {
    this.tmux("send-keys", "-t", "0", ...keys);
  }

  /** Types text literally. */
  type(text: string): void {
    this.tmux("send-keys", "-t", "0", "-l", text);
  }

  /** Pastes text in one write, as a terminal delivers a paste. */
  paste(text: string): void {
    this.tmux("set-buffer", "--", text);
    this.tmux("paste-buffer", "-t", "0");
  }

  /** The visible screen plus scrollback, wrapped lines joined; `escapes` keeps colours. */
  screen(escapes = false): string {
    return this.tmux("capture-pane", "-p", "-J", "-S", "-200", ...(escapes ? ["-e"] : []), "-t", "0");
  }

  /** Polls the screen until `expected` shows up (a string, or a pattern); fails with the screen. */
  async waitFor(expected: string | RegExp, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let screen = "";
    while (Date.now() < deadline) {
      screen = this.screen();
      if (typeof expected === "string" ? screen.includes(expected) : expected.test(screen)) return screen;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`Timed out waiting for ${String(expected)}. Screen:\n${screen}`);
  }

  kill(): void {
    spawnSync("tmux", ["-L", this.socket, "kill-server"]);
  }
}
