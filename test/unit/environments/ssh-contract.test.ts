/**
 * The shared environment contract (test/environments/contract.ts) run against the ssh backend,
 * logged in to a real sshd on a loopback port as a throw-away user.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSshEnvironment } from "../../../src/environments/ssh/index.js";
import { describeEnvironmentContract } from "../../environments/contract.js";
import { sshdSkipReason, startSshd } from "../../support/sshd.js";

describeEnvironmentContract(
  "ssh",
  async () => {
    const f = await startSshd();
    const home = mkdtempSync(join(tmpdir(), "hermes-ssh-contract-"));
    mkdirSync(join(home, ".ssh"), { mode: 0o700 });
    writeFileSync(join(home, ".ssh", "known_hosts"), `${f.knownHostsLine}\n`);
    const env = { HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin" };
    return {
      env: createSshEnvironment({
        home: join(home, ".hermes"),
        cwd: home,
        processEnv: env,
        childEnv: env,
        config: {
          terminal: {
            ssh_host: f.host,
            ssh_port: f.port,
            ssh_user: f.user,
            ssh_key: f.keyPath,
            file_sync_enabled: false,
            daemon_term_grace_seconds: 1,
          },
        },
      }),
      cleanup: async () => {
        await f.stop();
        rmSync(home, { recursive: true, force: true });
      },
    };
  },
  { timeoutMs: 45_000, ...(sshdSkipReason ? { skip: sshdSkipReason } : {}) },
);
