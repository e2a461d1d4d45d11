/** Short notices after an action ("Renamed", "Refused: …"), read out by screen readers. */
import { useEffect, useState } from "preact/hooks";

export interface Toast {
  id: number;
  text: string;
  tone: "ok" | "bad" | "info";
}

let next = 1;
const listeners = new Set<(toasts: Toast[]) => void>();
let toasts: Toast[] = [];

function publish(): void {
  for (const listener of listeners) listener(toasts);
}

export function notify(text: string, tone: Toast["tone"] = "ok", ms = 5000): void {
  const toast = { id: next++, text, tone };
  toasts = [...toasts, toast];
  publish();
  setTimeout(() => {
    toasts = toasts.filter((t) => t.id !== toast.id);
    publish();
  }, ms);
}

/** Reports a failed action as a toast; for `.catch(notifyError)`. */
export function notifyError(error: unknown): void {
  notify(error instanceof Error ? error.message : String(error), "bad", 8000);
}

export function Toasts() {
  const [items, setItems] = useState<Toast[]>(toasts);
  useEffect(() => {
    listeners.add(setItems);
    return () => {
      listeners.delete(setItems);
    };
  }, []);
  return (
    <div class="toasts" aria-live="polite" aria-atomic="false">
      {items.map((t) => (
        <div key={t.id} class={`toast ${t.tone}`} role={t.tone === "bad" ? "alert" : "status"}>
          {t.text}
        </div>
      ))}
    </div>
  );
}
