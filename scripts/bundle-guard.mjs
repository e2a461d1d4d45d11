// The CLI bundle's size guard: every start reads, and code-caches, all of dist/cli/hermes.cjs, so
// what goes into it is watched; so is each side bundle (dist/cli/side-*.cjs), against its own
// limit. scripts/build.mjs warns and test/unit/build/bundle-size.test.ts
// fails when the bundle grows past BUNDLE_LIMIT_BYTES or inlines a package that must stay out
// (an optional dependency, or the SDK of a chat platform, a cloud backend or the browser: each is
// required from node_modules by the feature that needs it). Sizes come from esbuild's metafile.

/**
 * The stated limit for dist/cli/hermes.cjs. Set at 3.0 MB when it was 2.83 MB; raised to 3.25 MB at
 * 3.01 MB, when the skills hub adapters, the dashboard API and the speech engine had grown our own
 * source to 2.37 MB (no package was inlined); raised to 3.30 MB at 3.27 MB for the PostgreSQL
 * backend's stores (about 140 kB of our own source; `pg` itself stays out). Those modules share
 * process-wide state with the rest (the secret redactor, the stores registry), so a side bundle
 * would need that state passed in first. Raised to 3.40 MB at 3.35 MB when the several-instance
 * work (shared skill writes and archive, approvals across instances, the hand-off ledger, the
 * control socket's caller check) and the direct chat-completions stream added about 75 kB of our
 * own source. Lowered to 3.26 MB (10% above its size) at 2.96 MB, when the PostgreSQL backend, the
 * dashboard's server, `hermes skills`, `hermes mcp`, `hermes profile`, ACP, batch and RL moved
 * into side bundles (scripts/side-bundles.mjs). Lowered to 3.11 MB (10% above) at 2.83 MB when the
 * chat platform adapters followed them.
 */
export const BUNDLE_LIMIT_BYTES = 3_110_000;

/**
 * The stated limit of each side bundle (scripts/side-bundles.mjs), `dist/cli/side-<name>.cjs`: a
 * side bundle is read only by the commands that use its surface, yet it should not grow unseen.
 * Set with room above their sizes when they were cut out (postgres 164 kB, platforms 161 kB,
 * dashboard 82 kB, skills 68 kB, mcp 39 kB, profile 37 kB, batch 34 kB, acp 29 kB, rl 22 kB); the
 * PostgreSQL backend gets more, as it is still growing.
 */
export const SIDE_BUNDLE_LIMITS = {
  postgres: 250_000,
  dashboard: 100_000,
  skills: 85_000,
  mcp: 50_000,
  profile: 50_000,
  batch: 45_000,
  acp: 40_000,
  rl: 30_000,
  platforms: 200_000,
};

/** A side bundle's limit; a side bundle without a stated one is held to 50 kB. */
export function sideBundleLimit(name) {
  return SIDE_BUNDLE_LIMITS[name] ?? 50_000;
}

/**
 * Packages never inlined into the CLI bundle, besides package.json's optionalDependencies: chat
 * platform SDKs (loaded by the gateway's adapter for that platform), cloud backends, the browser
 * driver and the providers' own SDKs that only one provider uses.
 */
export const OUT_OF_BUNDLE_PACKAGES = [
  "grammy",
  "discord.js",
  "@slack/bolt",
  "@mattermost/client",
  "matrix-js-sdk",
  "@matrix-org/matrix-sdk-crypto-wasm",
  "baileys",
  "ws",
  "playwright-core",
  "@daytonaio/sdk",
  "modal",
  "@lydell/node-pty",
  "@anthropic-ai/sdk",
  "@aws-sdk/client-bedrock-runtime",
  "@honcho-ai/sdk",
  "gpt-tokenizer",
];

/** The npm package a bundle input belongs to (the innermost node_modules), or undefined for our source. */
export function packageOf(inputPath) {
  const parts = inputPath.split(/[\\/]/);
  const at = parts.lastIndexOf("node_modules");
  if (at < 0 || at + 1 >= parts.length) return undefined;
  const first = parts[at + 1];
  return first.startsWith("@") && at + 2 < parts.length ? `${first}/${parts[at + 2]}` : first;
}

/**
 * What an esbuild metafile says about `outfile`: its size and, per package, the bytes it
 * contributes (largest first); `source` holds the project's own bytes.
 */
export function bundleReport(metafile, outfile) {
  const output = metafile.outputs[outfile];
  if (!output) throw new Error(`the metafile has no output ${outfile}`);
  const byPackage = new Map();
  let source = 0;
  for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
    const name = packageOf(path);
    if (name === undefined) source += bytesInOutput;
    else byPackage.set(name, (byPackage.get(name) ?? 0) + bytesInOutput);
  }
  const packages = [...byPackage]
    .map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
  return { outfile, bytes: output.bytes, source, packages };
}

const kb = (bytes) => `${(bytes / 1000).toFixed(0)} kB`;

/** The biggest node_modules contributors, one per line. */
export function topContributors(report, count = 10) {
  return report.packages
    .slice(0, count)
    .map((p) => `  ${kb(p.bytes).padStart(8)}  ${p.name}`)
    .join("\n");
}

/**
 * What is wrong with the bundle: inlined packages that must stay out, and a size over the limit
 * (with the biggest contributors, so the message says where to look). Empty when all is well.
 */
export function bundleProblems(report, options = {}) {
  const limit = options.limitBytes ?? BUNDLE_LIMIT_BYTES;
  const banned = new Set([...OUT_OF_BUNDLE_PACKAGES, ...(options.optionalDependencies ?? [])]);
  const problems = [];
  for (const p of report.packages) {
    if (banned.has(p.name)) {
      problems.push(
        `${report.outfile} inlines ${p.name} (${kb(p.bytes)}), which must be required from node_modules when its feature runs: add it to the CLI bundle's external list (scripts/cli-bundle.mjs)`,
      );
    }
  }
  if (report.bytes > limit) {
    problems.push(
      `${report.outfile} is ${kb(report.bytes)}, over its limit of ${kb(limit)} (scripts/bundle-guard.mjs); our own source is ${kb(report.source)}, the biggest node_modules contributors are:\n${topContributors(report)}`,
    );
  }
  return problems;
}
