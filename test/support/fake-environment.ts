/**
 * An Environment for tool tests that is not the local machine as far as the tools can tell
 * (kind "docker", isolated, optional mounts and docker socket) while its commands and files are
 * real: it delegates to a local environment rooted in a temporary directory. The tools then take
 * their non-local paths (Environment.files, exec, search through rg/grep in the environment).
 */

import { createLocalEnvironment } from "../../src/environments/local/index.js";
import type { Environment, EnvMount } from "../../src/environments/types.js";

export interface FakeEnvironmentOptions {
  cwd: string;
  mounts?: EnvMount[];
  dockerSocket?: boolean;
  isolation?: "host" | "isolated";
  env?: Record<string, string | undefined>;
}

export function fakeEnvironment(options: FakeEnvironmentOptions): Environment & { execs: string[] } {
  const inner = createLocalEnvironment({
    home: `${options.cwd}/.hermes`,
    cwd: options.cwd,
    processEnv: {},
    childEnv: options.env ?? { PATH: process.env.PATH, HOME: options.cwd },
    config: { terminal: { daemon_term_grace_seconds: 1 } },
  });
  const execs: string[] = [];
  return {
    kind: "docker",
    isolation: options.isolation ?? "isolated",
    mounts: options.mounts ?? [],
    dockerSocket: options.dockerSocket ?? false,
    workdir: options.cwd,
    files: inner.files,
    execs,
    describe: () => "a fake docker container (test double over a temporary directory)",
    start: () => inner.start(),
    shell: (taskId) => inner.shell(taskId),
    spawn: (command, o) => inner.spawn(command, o),
    exec(command, o) {
      execs.push(command);
      return inner.exec(command, o);
    },
    upload: (a, b) => inner.upload(a, b),
    download: (a, b) => inner.download(a, b),
    releaseTask: (id) => inner.releaseTask(id),
    stop: () => inner.stop(),
  };
}
