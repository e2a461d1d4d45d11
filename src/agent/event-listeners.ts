/**
 * The agent's event listeners. Each is called synchronously as an event happens; a promise one
 * returns (the session recorder's writes) is kept until it settles, so a turn's result can wait for
 * what its listeners store. A listener that throws or rejects breaks neither the turn nor the others.
 */
import type { AgentEvent, AgentEventListener } from "./events.js";

export class EventListeners {
  private readonly listeners = new Set<AgentEventListener>();
  /** Promises listeners returned that have not settled yet. */
  private readonly work = new Set<Promise<void>>();

  add(listener: AgentEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  broadcast(event: AgentEvent): void {
    for (const listener of this.listeners) {
      try {
        const work = listener(event);
        if (work instanceof Promise) this.keep(work);
      } catch {
        // A failing consumer must not break the turn or the other consumers.
      }
    }
  }

  private keep(work: Promise<unknown>): void {
    const done = () => {
      this.work.delete(settled);
    };
    const settled: Promise<void> = work.then(done, done);
    this.work.add(settled);
  }

  /** Settles when the work returned for the events so far has (and for any it led to). Never rejects. */
  async settled(): Promise<void> {
    while (this.work.size > 0) await Promise.all(this.work);
  }
}
