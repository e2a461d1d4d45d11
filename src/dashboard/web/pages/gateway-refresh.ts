/** Reloads live data every few seconds while the tab is visible. */
import { useEffect } from "preact/hooks";

/** How often the live state and pairing requests are read again. */
export const REFRESH_MS = 5000;

export function useRefresh(reload: () => void, ms = REFRESH_MS): void {
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === "visible") reload();
    }, ms);
    return () => clearInterval(timer);
  }, [reload, ms]);
}
