// `npm test`: clears every provider credential from the environment (tests must never reach a
// hosted API), rebuilds the CLI bundle the end-to-end tests spawn, then runs Vitest.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const secretish = /(_API_KEY|_TOKEN|_SECRET|_ACCESS_KEY|_BASE_URL)$|^(AWS_|HERMES_HOME$|HERMES_)/;
const env = { ...process.env };
for (const name of Object.keys(env)) {
  if (secretish.test(name)) delete env[name];
}
env.NO_COLOR = "1";
// A test that forgets to pass its own home must not read (or write) the developer's ~/.hermes.
const scratchHome = mkdtempSync(join(tmpdir(), "hermes-test-home-"));
env.HERMES_HOME = scratchHome;

const run = (args) => spawnSync(process.execPath, args, { stdio: "inherit", env });

const built = run(["scripts/build.mjs", "--no-types"]);
if (built.status !== 0) process.exit(built.status ?? 1);
const result = run(["node_modules/vitest/vitest.mjs", "run", ...process.argv.slice(2)]);
rmSync(scratchHome, { recursive: true, force: true });
process.exit(result.status ?? 1);
