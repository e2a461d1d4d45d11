/**
 * Hash routing: `#/sessions`, `#/sessions/<id>?q=pelican`. The first segment picks the page, the
 * rest (`parts`) and the query belong to it. `navigate` changes the hash; `setQuery` rewrites the
 * query without adding history entries (filters and search boxes).
 */
import { useEffect, useState } from "preact/hooks";

export interface Route {
  page: string;
  parts: string[];
  query: URLSearchParams;
}

export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#\/?/, "");
  const q = raw.indexOf("?");
  const path = q >= 0 ? raw.slice(0, q) : raw;
  const query = new URLSearchParams(q >= 0 ? raw.slice(q + 1) : "");
  const [page = "", ...parts] = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { page, parts, query };
}

export function href(
  page: string,
  parts: string[] = [],
  query: Record<string, string | undefined> = {},
): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) params.set(k, v);
  const qs = params.toString();
  return `#/${[page, ...parts].map(encodeURIComponent).join("/")}${qs ? `?${qs}` : ""}`;
}

export function navigate(
  page: string,
  parts: string[] = [],
  query: Record<string, string | undefined> = {},
): void {
  window.location.hash = href(page, parts, query);
}

/** Replaces the current route's query (no new history entry). */
export function setQuery(query: Record<string, string | undefined>): void {
  const route = parseHash(window.location.hash);
  const next = href(route.page, route.parts, query);
  history.replaceState(history.state, "", next);
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(window.location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(window.location.hash));
    window.addEventListener("hashchange", update);
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return route;
}
