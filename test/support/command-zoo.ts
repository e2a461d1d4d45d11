/**
 * The command zoo: shell commands an injected or confused model might send, each with the verdict
 * the analyser must give, written the way an attacker would try to get around each guard, plus the
 * harmless look-alikes that must stay allowed. Shared by the analyser's tests and its benchmark.
 *
 * The context: user home /home/zoo, Hermes home /home/zoo/.hermes, cwd /home/zoo/project.
 * `link-to-bashrc` and `link-to-state` in the cwd are symlinks (see ZOO_LINKS).
 *
 * The tables live in command-zoo-{safe,running,hardline}.ts, the context in command-zoo-context.ts.
 */

import type { ZooEntry } from "./command-zoo-context.js";
import {
  APPROVAL,
  CATASTROPHIC,
  HARDLINE_OTHER,
  MALFORMED,
  PROTECTED,
  SELF_KILL,
} from "./command-zoo-hardline.js";
import { DECODED, INTERPRETERS, REMOTE, SHELL_CODE, WRAPPERS } from "./command-zoo-running.js";
import { EXPANSION, SAFE } from "./command-zoo-safe.js";

export {
  type Expect,
  nested,
  ZOO_CWD,
  ZOO_HERMES,
  ZOO_HOME,
  ZOO_LINKS,
  type ZooEntry,
  zooContext,
} from "./command-zoo-context.js";
export {
  APPROVAL,
  CATASTROPHIC,
  DECODED,
  EXPANSION,
  HARDLINE_OTHER,
  INTERPRETERS,
  MALFORMED,
  PROTECTED,
  REMOTE,
  SAFE,
  SELF_KILL,
  SHELL_CODE,
  WRAPPERS,
};

/** Every table, for the test and the benchmark. */
export const ZOO: Readonly<Record<string, readonly ZooEntry[]>> = {
  SAFE,
  EXPANSION,
  WRAPPERS,
  SHELL_CODE,
  DECODED,
  INTERPRETERS,
  REMOTE,
  CATASTROPHIC,
  HARDLINE_OTHER,
  PROTECTED,
  APPROVAL,
  SELF_KILL,
  MALFORMED,
};

export const ALL_COMMANDS: readonly ZooEntry[] = Object.values(ZOO).flat();
