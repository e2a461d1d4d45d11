/**
 * Nudge counters of the learning loop, pure. Python Hermes's rules: every user turn brings the
 * memory nudge closer, every model call that asked for tools brings the skill nudge closer; the
 * agent using `memory` (or `skill_manage`) itself resets that counter, since it just did what the
 * nudge would ask. A due nudge never touches the running turn or the system prompt: the caller
 * starts a background review after the turn (see learning-loop.ts).
 */

/** What a review looks at: facts for memory, procedures for skills, or both. */
export type ReviewFocus = "memory" | "skills" | "both";

export interface NudgeIntervals {
  /** User turns between memory reviews; 0: never. */
  memory: number;
  /** Tool iterations between skill reviews; 0: never. */
  skills: number;
}

/** Which stores the reviewed agent can write: a nudge for a tool it lacks never comes due. */
export interface NudgeTools {
  memory: boolean;
  skills: boolean;
}

export class NudgeCounters {
  private turnsSinceMemory = 0;
  private itersSinceSkill = 0;
  /** User turns no review has read yet (the flush before they leave the context counts these). */
  private unreviewed = 0;
  private tools: NudgeTools = { memory: false, skills: false };

  constructor(private readonly intervals: NudgeIntervals) {}

  /** The reviewed agent's tools, known once its session froze them. */
  setTools(tools: NudgeTools): void {
    this.tools = { ...tools };
  }

  get available(): NudgeTools {
    return { ...this.tools };
  }

  userTurn(): void {
    this.unreviewed++;
    if (this.intervals.memory > 0 && this.tools.memory) this.turnsSinceMemory++;
  }

  /** One model call that asked for tools. */
  toolIteration(): void {
    if (this.intervals.skills > 0 && this.tools.skills) this.itersSinceSkill++;
  }

  /** A tool the agent ran itself during the turn. */
  toolUsed(name: string): void {
    if (name === "memory") this.turnsSinceMemory = 0;
    else if (name === "skill_manage") this.itersSinceSkill = 0;
  }

  /**
   * At the end of a turn: the review that came due, if any, with its counters reset (a due nudge
   * is consumed whether or not the review then saves anything).
   */
  takeDue(): ReviewFocus | undefined {
    const memory =
      this.intervals.memory > 0 && this.tools.memory && this.turnsSinceMemory >= this.intervals.memory;
    const skills =
      this.intervals.skills > 0 && this.tools.skills && this.itersSinceSkill >= this.intervals.skills;
    if (memory) this.turnsSinceMemory = 0;
    if (skills) this.itersSinceSkill = 0;
    return memory && skills ? "both" : memory ? "memory" : skills ? "skills" : undefined;
  }

  /** User turns not yet read by any review. */
  get unreviewedTurns(): number {
    return this.unreviewed;
  }

  /**
   * Whether turns about to leave the context deserve a flush: at least `minTurns` unreviewed user
   * turns and a store to write. Undefined when not; else the focus the flush review takes.
   */
  flushFocus(minTurns: number): ReviewFocus | undefined {
    if (minTurns <= 0 || this.unreviewed < minTurns) return undefined;
    return this.toolsFocus();
  }

  /** A review read everything up to now. */
  markReviewed(): void {
    this.unreviewed = 0;
  }

  /** The stores the agent can write, as a focus; undefined with neither. */
  toolsFocus(): ReviewFocus | undefined {
    const { memory, skills } = this.tools;
    return memory && skills ? "both" : memory ? "memory" : skills ? "skills" : undefined;
  }
}
