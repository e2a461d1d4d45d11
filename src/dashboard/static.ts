/**
 * The dashboard's page: the files `npm run build` writes to dist/dashboard/ (index.html, app.js,
 * app.css and their source map), read once at start and served from memory. Nothing is fetched
 * from elsewhere at run time; the page's Content-Security-Policy allows only its own origin.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

/** The page's files by URL path (`/`, `/assets/app.js`, ...). */
export type WebAssets = ReadonlyMap<string, StaticFile>;

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
};

/** The policy the page is served with: scripts, styles, images and API calls from this origin only. */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * Where the built page is: `HERMES_DASHBOARD_ASSETS` when set, else `dist/dashboard/` of this
 * package (found from the running file, bundled or not). `undefined` when it was never built.
 */
export function webAssetsDir(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  const override = env["HERMES_DASHBOARD_ASSETS"]?.trim();
  if (override) return existsSync(join(override, "index.html")) ? override : undefined;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) {
      try {
        const { name } = JSON.parse(readFileSync(pkg, "utf8")) as { name?: unknown };
        if (name === "hermes-agent") {
          const built = join(dir, "dist", "dashboard");
          return existsSync(join(built, "index.html")) ? built : undefined;
        }
      } catch {
        // An unreadable package.json on the way up is not ours; keep walking.
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** Reads the built page into memory: `index.html` at `/`, every other file under `/assets/`. */
export function loadWebAssets(dir: string | undefined): WebAssets {
  const files = new Map<string, StaticFile>();
  if (!dir) return files;
  for (const name of readdirSync(dir)) {
    const dot = name.lastIndexOf(".");
    const type = dot > 0 ? TYPES[name.slice(dot)] : undefined;
    if (!type || !statSync(join(dir, name)).isFile()) continue;
    const body = readFileSync(join(dir, name));
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    files.set(name === "index.html" ? "/" : `/assets/${name}`, { body, type, etag });
  }
  return files;
}

/** What `/` answers when the page was not built (a source checkout before `npm run build`). */
export const NOT_BUILT_PAGE = Buffer.from(
  "<!doctype html><meta charset=utf-8><title>Hermes dashboard</title>" +
    "<p>The dashboard's page is not built in this checkout. Run <code>npm run build</code> and start " +
    "<code>hermes dashboard</code> again. The JSON API is served under <code>/api/</code>.</p>\n",
);
