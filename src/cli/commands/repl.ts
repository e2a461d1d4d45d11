/**
 * The interactive chat (`hermes`, `hermes chat` with no prompt). One input line stays live for the
 * whole session (see tui/input.ts): answers stream above it as rendered markdown on stdout, tool
 * lines and notices go to stderr, and commands like /stop, /steer, /queue, /status and /usage work
 * while a turn runs.
 *
 * Keys: the first Ctrl+C during a turn interrupts it (what streamed stays, and the agent keeps the
 * partial answer in the conversation); a second one within 2 s quits. At an idle prompt Ctrl+C
 * clears the line, and a second one on an empty line quits. Quitting with Ctrl+C exits 130, like
 * SIGINT; /quit and Ctrl+D exit 0. Either way the session is closed and kept for `hermes -c`.
 */
import type { AgentRun } from "../../agent/agent.js";
import type { ChatSession } from "../../agent/chat-session.js";
import type { ToolProgress } from "../../agent/tool-display.js";
import { catalogContextLength, DEFAULT_CONTEXT_LENGTH } from "../../ai/context-length.js";
import {
  type CommandContext,
  createCommandRegistry,
  dispatchInput,
  type RunnableSession,
} from "../../commands/index.js";
import type { HermesConfig } from "../../config/defaults.js";
import { discoverSkills } from "../../knowledge/skills/discovery.js";
import type { McpManager } from "../../tools/mcp/manager.js";
import type { AgentNotice } from "../../tools/types.js";
import { hermesVersion } from "../../util/version.js";
import type { ChatFlags } from "../flags.js";
import { useTerminalAsker } from "../prompts.js";
import { pageFetcher, ReplInput } from "../tui/attachments.js";
import { type BusyInputMode, PendingInputs, parseBusyInputMode } from "../tui/busy.js";
import { HistoryFile } from "../tui/history.js";
import { formatBanner, formatRecap } from "../tui/info.js";
import { TerminalInput } from "../tui/input.js";
import type { MarkdownMode } from "../tui/markdown-stream.js";
import { Spinner } from "../tui/spinner.js";
import { formatStatusLine, type StatusFacts, type StatusField, statusFields } from "../tui/status-line.js";
import { colorFor, createStyle, type Style } from "../tui/style.js";
import { displayWidth, stripAnsi } from "../tui/text-width.js";
import { parseToolProgress } from "../tui/tool-line.js";
import { TurnView } from "../tui/turn-view.js";
import { wrapLines } from "../tui/wrap.js";
import { withSpokenApprovals } from "../voice/spoken-approval.js";
import { VoiceMode } from "../voice/voice-mode.js";

type Out = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/**
 * The REPL's session: a `ChatSession` (or a fake in tests). The notice members are optional so a
 * session without them simply never wakes the prompt.
 */
export type ReplSession = RunnableSession & Partial<Pick<ChatSession, "onWake" | "pendingWake" | "wake">>;

/** Settings the user changes from inside the REPL. */
interface ReplSettings {
  toolProgress: ToolProgress;
  busyMode: BusyInputMode;
  yolo: boolean;
  statusBar: boolean;
}

export interface ReplOptions {
  /** The opened session (`ChatSession`). The REPL does not close it; the caller does. */
  session: ReplSession;
  home: string;
  config: HermesConfig;
  env: Record<string, string | undefined>;
  flags: ChatFlags;
  /** Toolsets the session was started with (for /toolsets). */
  toolsets: readonly string[];
  /** Image files (`--image`) that go with the first message. */
  images?: readonly string[];
  /** This chat's MCP servers, started on first use (`/reload-mcp`); absent: MCP unavailable. */
  mcp?: () => Promise<McpManager>;
  /** Called once the prompt is live with a printer for notices that arrive later (MCP warnings). */
  attachNotices?: (print: (line: string) => void) => void;
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout?: Out;
  stderr?: Out;
}

/** How long after an interrupting Ctrl+C a second one quits. */
const DOUBLE_CTRL_C_MS = 2000;
/** How long the status line's figures are reused (it is drawn on every spinner frame). */
const STATUS_FACTS_MS = 1000;

/** Runs the interactive session until the user leaves; resolves to the exit code. */
export function runRepl(options: ReplOptions): Promise<number> {
  return new Repl(options).run();
}

class Repl {
  private readonly session: ReplSession;
  private readonly stdout: Out;
  private readonly stderr: Out;
  private readonly style: Style;
  private readonly markdown: MarkdownMode;
  private readonly input: TerminalInput;
  private readonly spinner: Spinner;
  private readonly registry = createCommandRegistry();
  private readonly pending = new PendingInputs();
  private readonly settings: ReplSettings;
  private readonly slash: CommandContext;
  /** Images for the next message, dropped paths and `@` references (tui/attachments.ts). */
  private readonly composer: ReplInput;
  private current: Promise<void> | null = null;
  private chain: Promise<void> = Promise.resolve();
  private turnStartedAt = 0;
  private lastInterruptAt = 0;
  private idleInterrupt = false;
  private exiting = false;
  private finish: (code: number) => void = () => undefined;
  /** The running command's latest output lines, shown under the spinner row. */
  private liveLines: readonly string[] = [];
  private readonly statusFields: StatusField[];
  private statusFacts: { at: number; facts: StatusFacts | null } | null = null;
  private statusLoading = false;
  /** Voice mode (`/voice`, `--voice`): push-to-talk and spoken answers (cli/voice/). */
  private readonly voice: VoiceMode;

  constructor(private readonly options: ReplOptions) {
    const { session, env, config, flags } = options;
    this.session = session;
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
    this.style = createStyle(colorFor(this.stderr, env));
    const answerColor = colorFor(this.stdout, env);
    this.markdown = this.stdout.isTTY === true ? (answerColor ? "ansi" : "plain") : "raw";
    this.settings = {
      toolProgress: flags.verbose ? "verbose" : parseToolProgress(config.display.tool_progress),
      busyMode: parseBusyInputMode(config.display.busy_input_mode),
      yolo: session.agent.yolo,
      statusBar: true,
    };
    this.composer = new ReplInput({
      home: options.home,
      env,
      cwd: () => this.session.agent.cwd,
      contextLength: () =>
        this.session.agent.config.model.context_length ??
        catalogContextLength(this.session.model) ??
        DEFAULT_CONTEXT_LENGTH,
      fetchUrl: pageFetcher(config),
    });
    this.statusFields = statusFields(config.display.runtime_footer);
    // The prompt is drawn where the user looks: stderr, unless only stdout is a terminal.
    const promptStream = this.stderr.isTTY === true || this.stdout.isTTY !== true ? this.stderr : this.stdout;
    this.input = new TerminalInput({
      input: options.stdin ?? process.stdin,
      output: promptStream,
      style: createStyle(colorFor(promptStream, env)),
      history: new HistoryFile(options.home),
      complete: async (line) =>
        (await this.composer.complete(line)) ??
        this.registry.complete(line, this.slash, () => this.skillNames()),
      status: () => {
        const text = this.spinner.text();
        return text && this.liveLines.length > 0 ? { ...text, detail: this.liveLines } : text;
      },
      footer: (columns) => this.statusLine(columns),
    });
    this.spinner = new Spinner(() => this.input.refreshStatus());
    this.voice = new VoiceMode({
      config,
      env,
      home: options.home,
      host: {
        print: (...lines) => this.print(...lines),
        refresh: () => this.input.refresh(),
        send: (text) => this.startTurn(text),
        busy: () => this.running,
        paint: this.style,
      },
    });
    this.slash = this.slashContext();
  }

  async run(): Promise<number> {
    const s = this.session;
    this.print(...(await this.banner()));
    if (this.settings.yolo) {
      this.print(
        this.style.red(
          "YOLO is on: dangerous commands run without asking; protected paths still ask (/yolo turns it off).",
        ),
      );
    }
    if (s.resumed) this.print(...formatRecap(s.agent.messages, this.style, this.stderr.columns));
    this.options.attachNotices?.((line) => this.print(this.style.yellow(line)));
    for (const path of this.options.images ?? []) {
      try {
        const image = await this.composer.attach(path);
        this.print(this.style.dim(`📎 Attached ${image.path}: it goes with your first message.`));
      } catch (error) {
        this.print(
          this.style.yellow(`warning: --image: ${error instanceof Error ? error.message : String(error)}`),
        );
      }
    }
    const detachAsker = useTerminalAsker(
      withSpokenApprovals(this.voice, (lines, prompt, options) =>
        this.input.ask(this.wrapped(lines), prompt, options),
      ),
    );
    const done = new Promise<number>((resolve) => {
      this.finish = resolve;
    });
    this.input.start({
      submit: (text) => {
        this.chain = this.chain.then(() => this.submit(text)).catch(() => undefined);
      },
      interrupt: (info) => this.onInterrupt(info),
      eof: () => void this.exit(0),
    });
    // A background process or child reporting while the prompt is idle starts a turn for it.
    const detachWake = s.onWake?.((notice) => this.wakeFor(notice)) ?? (() => undefined);
    const early = s.pendingWake?.();
    if (early) this.wakeFor(early);
    const stdin = this.options.stdin ?? process.stdin;
    const onKey = (_text: string, key: { name?: string; ctrl?: boolean; meta?: boolean } | undefined) =>
      this.voice.onKey(key);
    stdin.on("keypress", onKey);
    if (this.options.flags.voice) await dispatchInput(this.registry, "/voice on", this.slash);
    try {
      return await done;
    } finally {
      stdin.off("keypress", onKey);
      this.voice.close();
      detachWake();
      detachAsker();
    }
  }

  private async banner(): Promise<string[]> {
    const s = this.session;
    const title = await s.currentTitle();
    return formatBanner(
      {
        version: hermesVersion(),
        model: s.model,
        provider: s.provider,
        sessionId: s.id,
        resumed: s.resumed,
        title,
        messages: s.agent.messages.length,
      },
      this.style,
    );
  }

  private get running(): boolean {
    return this.current !== null;
  }

  /** Notices above the prompt (stderr), word-wrapped to the terminal. */
  private print(...lines: string[]): void {
    this.input.print(this.wrapped(lines), this.stderr);
  }

  private wrapped(lines: readonly string[]): string[] {
    return wrapLines(lines, this.stderr.isTTY === true ? this.stderr.columns : undefined);
  }

  /** The status line for `columns` cells, or null when it is off or has nothing to say. */
  private statusLine(columns: number): string | null {
    const voice = this.voice.statusText();
    if (voice) {
      // The voice state leads; the session's facts get what room is left.
      const room = columns - displayWidth(stripAnsi(voice)) - 3;
      const rest = this.settings.statusBar && room >= 12 ? this.factsLine(room) : null;
      return rest ? `${voice}${this.style.dim(" · ")}${rest}` : voice;
    }
    return this.factsLine(columns);
  }

  private factsLine(columns: number): string | null {
    if (!this.settings.statusBar) return null;
    if (!this.statusFacts || Date.now() - this.statusFacts.at > STATUS_FACTS_MS) this.loadStatusFacts();
    const facts = this.statusFacts?.facts;
    return facts ? formatStatusLine(facts, this.statusFields, columns, this.style) : null;
  }

  /** Reads the figures from the store in the background; the prompt is redrawn when they are in. */
  private loadStatusFacts(): void {
    if (this.statusLoading) return;
    const at = Date.now();
    this.statusLoading = true;
    void this.readStatusFacts().then((facts) => {
      this.statusLoading = false;
      this.statusFacts = { at, facts };
      if (!this.exiting) this.input.refresh();
    });
  }

  /** The figures go stale: the next draw shows them and reads fresh ones. */
  private staleStatus(): void {
    if (this.statusFacts) this.statusFacts = { ...this.statusFacts, at: 0 };
  }

  private async readStatusFacts(): Promise<StatusFacts | null> {
    const s = this.session;
    try {
      const report = await s.usageReport();
      return {
        model: s.model,
        provider: s.provider,
        contextTokens: report.contextTokens,
        contextLength: report.contextLength,
        totalTokens: report.usage.inputTokens + report.usage.outputTokens,
        costUsd: report.costUsd,
        costIncluded: report.costStatus === "included",
        cwd: s.agent.cwd,
        home: this.options.env.HOME,
      };
    } catch {
      // The store is briefly unreadable (another process holds it): keep the line off this time.
      return null;
    }
  }

  /** Drops the cached status figures so the next draw reads fresh ones (a turn ended, a switch). */
  private refreshStatusLine(): void {
    this.staleStatus();
    this.input.refresh();
  }

  private async submit(text: string): Promise<void> {
    if (this.exiting) return;
    this.idleInterrupt = false;
    const outcome = await dispatchInput(this.registry, text, this.slash);
    if (outcome.kind !== "message") {
      // A command may have switched the model or the session, or toggled the status line.
      this.refreshStatusLine();
      return;
    }
    if (this.running) {
      const decision = this.pending.route(this.settings.busyMode, text);
      if (decision.action === "steer") this.session.steer(text);
      if (decision.action === "interrupt") this.session.interrupt();
      this.print(this.style.dim(decision.notice));
      return;
    }
    this.startTurn(text);
  }

  /** Installed skill names, for completing `/<skill-name>`. */
  private skillNames(): string[] {
    const { home, config } = this.session.agent;
    return discoverSkills({ home, config: config.skills }).skills.map((k) => k.name);
  }

  /**
   * `text` null: a turn for the session's queued notices (see `wakeFor`). Typed messages waiting
   * in the queue go first; notices that came meanwhile ride along with them.
   */
  private startTurn(text: string | null): void {
    if (this.current) {
      if (text !== null) this.pending.enqueue(text);
      return;
    }
    this.current = this.runTurn(text).finally(() => {
      this.current = null;
      if (this.exiting) return;
      const next = this.pending.next();
      if (next !== null) {
        this.print(this.style.dim(`↳ Sending: ${next.replace(/\s+/g, " ").slice(0, 70)}`));
        this.startTurn(next);
        return;
      }
      const notice = this.session.pendingWake?.();
      if (notice) this.wakeFor(notice);
    });
  }

  /** A wake notice arrived: an idle prompt runs a turn for it now, saying what woke it. */
  private wakeFor(notice: AgentNotice): void {
    if (this.exiting || this.running) return; // the running turn's end checks again
    const first = notice.text.trim().split("\n")[0] ?? "";
    const line = first.length > 100 ? `${first.slice(0, 99)}…` : first;
    this.print(this.style.cyan(`⏰ ${notice.source} ${notice.id}: ${line}`));
    this.startTurn(null);
  }

  private async runTurn(text: string | null): Promise<void> {
    this.session.agent.yolo = this.settings.yolo;
    this.turnStartedAt = Date.now();
    // A new turn starts a new double-Ctrl+C window: its first Ctrl+C interrupts it.
    this.lastInterruptAt = 0;
    let label: string | null = null;
    const view = new TurnView(
      {
        answer: (lines) => this.input.print(lines, this.stdout),
        info: (lines) => this.print(...lines),
        output: (lines) => {
          this.liveLines = lines;
          // Shown by the next spinner frame (a tenth of a second): a chatty command cannot flood
          // the terminal with redraws. Taking the rows away is drawn at once.
          if (lines.length === 0) this.input.refreshStatus();
        },
        status: (next) => {
          if (next === label) return;
          label = next;
          if (next === null) this.spinner.stop();
          else this.spinner.setLabel(next);
          this.input.refresh();
        },
      },
      {
        markdown: this.markdown,
        style: this.style,
        width: () => (this.stdout.isTTY === true ? this.stdout.columns : undefined),
        toolProgress: () => this.settings.toolProgress,
        showReasoning: this.options.config.display.show_reasoning === true,
      },
    );
    this.spinner.start("thinking…");
    label = "thinking…";
    this.input.refresh();
    let run: AgentRun | undefined;
    try {
      let content: Awaited<ReturnType<ReplInput["compose"]>>["content"] = null;
      if (text !== null) {
        const composed = await this.composer.compose(text);
        const paint = (n: string) => (n.startsWith("warning:") ? this.style.yellow(n) : this.style.dim(n));
        if (composed.notices.length > 0) this.print(...composed.notices.map(paint));
        content = composed.content;
        if (content === null) {
          view.finish();
          this.spinner.stop();
          this.input.refresh();
          return;
        }
      }
      run = text === null ? this.session.wake?.() : this.session.run(content ?? text);
    } catch (error) {
      view.finish();
      this.print(`${this.style.red("error:")} ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    if (!run) {
      // The notices were withdrawn (a tool already reported them) before the turn could start.
      view.finish();
      this.spinner.stop();
      this.input.refresh();
      return;
    }
    let answer: string | null = null;
    try {
      for await (const event of run) view.handle(event);
      const result = await run.result;
      if (result.reason === "completed") answer = result.text;
    } catch (error) {
      this.print(`${this.style.red("error:")} ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      view.finish();
      this.liveLines = [];
      this.spinner.stop();
      if (view.answered) this.input.print([""], this.stdout);
      this.refreshStatusLine();
    }
    if (!this.exiting) void this.voice.answered(answer);
  }

  private onInterrupt(info: { hadText: boolean; question: boolean }): void {
    if (!info.question && this.voice.interrupt()) return;
    const now = Date.now();
    const soon = now - this.lastInterruptAt <= DOUBLE_CTRL_C_MS;
    if (this.running) {
      if (soon) {
        void this.exit(130);
        return;
      }
      this.lastInterruptAt = now;
      this.session.interrupt();
      this.print(this.style.dim("⏹ Interrupting… (Ctrl+C again within 2 s quits)"));
      return;
    }
    if (info.question) return;
    if (soon) {
      void this.exit(130);
      return;
    }
    if (info.hadText) {
      this.idleInterrupt = false;
      this.input.clearInput({ echo: true });
      return;
    }
    if (this.idleInterrupt) {
      void this.exit(130);
      return;
    }
    this.idleInterrupt = true;
    this.print(this.style.dim("Press Ctrl+C again to quit (or Ctrl+D, or /quit)."));
  }

  private async exit(code: number): Promise<void> {
    if (this.exiting) return;
    this.exiting = true;
    if (this.current) {
      this.session.interrupt();
      // Let the turn end so the partial answer is recorded; never hang on a stuck tool.
      await Promise.race([this.current, new Promise((resolve) => setTimeout(resolve, 3000).unref())]);
    }
    this.spinner.stop();
    this.input.close();
    if (await this.session.loadRecord()) {
      this.stderr.write(
        `${this.style.dim(`Session ${this.session.id} saved. Continue it with: hermes -c  (or hermes -r ${this.session.id})`)}\n`,
      );
    }
    this.finish(code);
  }

  /** The REPL as the commands' surface-neutral context. */
  private slashContext(): CommandContext {
    const repl = this;
    return {
      surface: { kind: "repl", platform: "cli", isAdmin: true },
      get session() {
        return repl.session;
      },
      paint: this.style,
      reply: (...lines) => this.print(...lines),
      ask: (lines, prompt) => this.input.ask(this.wrapped(lines), prompt),
      get running() {
        return repl.running;
      },
      get turnSeconds() {
        return repl.running ? Math.floor((Date.now() - repl.turnStartedAt) / 1000) : null;
      },
      settings: this.settings,
      queue: this.pending,
      send: (text) => this.startTurn(text),
      stop: () => this.session.interrupt(),
      newSession: async (title) => {
        await this.session.newSession(title);
        this.session.agent.yolo = this.settings.yolo;
        this.staleStatus();
      },
      exit: (code) => void this.exit(code),
      clearScreen: () => {
        if (!this.input.clearScreen()) return;
        void this.banner().then((lines) => this.print(...lines));
      },
      sessionChanged: () => {
        this.session.agent.yolo = this.settings.yolo;
        this.staleStatus();
      },
      registry: this.registry,
      // `/tools enable|disable` changes the session's toolsets; `/toolsets` shows them as they are.
      get toolsets() {
        return repl.session.toolsets ?? repl.options.toolsets;
      },
      attachments: this.composer,
      voice: this.voice,
      ...(this.options.mcp ? { mcp: this.options.mcp } : {}),
      now: () => Date.now() / 1000,
    };
  }
}
