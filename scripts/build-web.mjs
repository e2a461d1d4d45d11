// Builds the dashboard's page (src/dashboard/web/) into dist/dashboard/: index.html, app.js (one
// minified ES module with preact inside), app.css and icon.svg. `hermes dashboard` serves these files as
// they are; nothing is fetched from a CDN. Run alone with `node scripts/build-web.mjs`.
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const web = `${root}src/dashboard/web/`;
const out = `${root}dist/dashboard/`;

export async function buildWeb() {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8"));
  await Promise.all([
    build({
      entryPoints: [`${web}main.tsx`],
      outfile: `${out}app.js`,
      bundle: true,
      format: "esm",
      platform: "browser",
      target: ["chrome110", "firefox115", "safari16"],
      minify: true,
      sourcemap: "linked",
      jsx: "automatic",
      jsxImportSource: "preact",
      legalComments: "none",
      logLevel: "warning",
      define: { __HERMES_VERSION__: JSON.stringify(pkg.version) },
    }),
    build({
      entryPoints: [`${web}app.css`],
      outfile: `${out}app.css`,
      bundle: true,
      minify: true,
      logLevel: "warning",
    }),
  ]);
  copyFileSync(`${web}index.html`, `${out}index.html`);
  // The tab's icon: without one, Chromium asks for /favicon.ico and logs the 404 as a console error.
  copyFileSync(`${web}icon.svg`, `${out}icon.svg`);
  writeFileSync(`${out}BUILT`, `${pkg.version}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildWeb();
