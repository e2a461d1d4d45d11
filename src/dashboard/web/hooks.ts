/** Data hooks: `useApi` loads a GET route (with reload and abort on change), `useDebounced`. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { apiGet } from "./api.js";

export interface Loaded<T> {
  data: T | null;
  error: Error | null;
  loading: boolean;
  reload: () => void;
}

/** GETs `/api/<path>` with `query`; reloads when either changes or `reload()` is called. */
export function useApi<T = Record<string, unknown>>(
  path: string | null,
  query: Record<string, string | number | undefined | null> = {},
): Loaded<T> {
  const [state, setState] = useState<{ data: T | null; error: Error | null; loading: boolean }>({
    data: null,
    error: null,
    loading: path !== null,
  });
  const [tick, setTick] = useState(0);
  const key = `${path}?${JSON.stringify(query)}`;
  const queryRef = useRef(query);
  queryRef.current = query;
  useEffect(() => {
    if (path === null) return;
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    apiGet<T>(path, queryRef.current, controller.signal).then(
      (data) => setState({ data, error: null, loading: false }),
      (error: unknown) => {
        if (controller.signal.aborted) return;
        setState((s) => ({
          data: s.data,
          error: error instanceof Error ? error : new Error(String(error)),
          loading: false,
        }));
      },
    );
    return () => controller.abort();
  }, [key, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function useDebounced<T>(value: T, ms = 250): T {
  const [current, setCurrent] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setCurrent(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return current;
}
