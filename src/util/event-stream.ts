/**
 * A push-based async iterable: producers `push` values and `end` (or `fail`) once; a single
 * consumer iterates with `for await`. Values pushed before the consumer starts are buffered.
 */
export class EventStream<T> implements AsyncIterable<T> {
  private readonly queue: T[] = [];
  private waiting: ((r: IteratorResult<T>) => void) | null = null;
  private rejectWaiting: ((e: unknown) => void) | null = null;
  private done = false;
  private error: unknown = undefined;
  private failed = false;

  push(value: T): void {
    if (this.done) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      this.rejectWaiting = null;
      resolve({ value, done: false });
    } else {
      this.queue.push(value);
    }
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = null;
      this.rejectWaiting = null;
      resolve({ value: undefined, done: true });
    }
  }

  fail(error: unknown): void {
    if (this.done) return;
    this.failed = true;
    this.error = error;
    this.done = true;
    if (this.rejectWaiting) {
      const reject = this.rejectWaiting;
      this.waiting = null;
      this.rejectWaiting = null;
      reject(error);
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const value = this.queue.shift();
        if (value !== undefined || this.queue.length > 0) {
          return Promise.resolve({ value: value as T, done: false });
        }
        if (this.done) {
          return this.failed ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
        }
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.waiting = resolve;
          this.rejectWaiting = reject;
        });
      },
      return: () => {
        this.done = true;
        this.queue.length = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
