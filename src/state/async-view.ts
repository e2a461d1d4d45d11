/**
 * The asynchronous contract of a store whose current implementation is partly synchronous (the
 * file- and SQLite-backed stores of the gateway, cron, memory and skills). `Asynchronous<T>` is
 * `T` with every method answering a promise; `asyncView` builds one over an implementation, each
 * method an `async` wrapper whose body is one call into it, so the work is done inside the call
 * (order and durability as before) and failures become rejections. A PostgreSQL backend
 * implements the same type directly.
 */

/** `T`'s methods, each answering a promise of what it answered. */
export type Asynchronous<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : T[K];
};

/** The methods `methods` of `impl`, behind promises (see the file comment). */
export function asyncView<T extends object, K extends keyof T>(
  impl: T,
  methods: readonly K[],
): Asynchronous<Pick<T, K>> {
  const view: Record<PropertyKey, unknown> = {};
  for (const name of methods) {
    const fn = impl[name];
    if (typeof fn !== "function") throw new TypeError(`${String(name)} is not a method of the store`);
    view[name] = async (...args: unknown[]) => (fn as (...a: unknown[]) => unknown).apply(impl, args);
  }
  return view as Asynchronous<Pick<T, K>>;
}

/**
 * An asynchronous store opened on first use: each of `methods` waits for `open()` (once), then
 * calls the store. For commands that learn which backend holds a store only after they parsed
 * their arguments; `open` failing rejects every call with its error.
 */
export function openedOnUse<T extends object, K extends keyof T>(
  open: () => Promise<T>,
  methods: readonly K[],
): Pick<T, K> {
  let opened: Promise<T> | undefined;
  const view: Record<PropertyKey, unknown> = {};
  for (const name of methods) {
    view[name] = async (...args: unknown[]) => {
      opened ??= open();
      const store = await opened;
      return (store[name] as (...a: unknown[]) => unknown).apply(store, args);
    };
  }
  return view as Pick<T, K>;
}
