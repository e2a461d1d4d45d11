/** The zoo's analysis context and entry type (see command-zoo.ts). */

import { guardRoots } from "../../src/tools/approval/protected-paths.js";
import type { AnalysisContext } from "../../src/tools/approval/types.js";

export type Expect = "safe" | "approve" | "hardline";
/** [command, expected verdict, expected pattern key (the deciding finding) when it matters]. */
export type ZooEntry = readonly [command: string, expect: Expect, key?: string];

export const ZOO_HOME = "/home/zoo";
export const ZOO_HERMES = "/home/zoo/.hermes";
export const ZOO_CWD = "/home/zoo/project";
export const ZOO_LINKS: Readonly<Record<string, string>> = {
  "/home/zoo/project/link-to-bashrc": "/home/zoo/.bashrc",
  "/home/zoo/project/link-to-state": "/home/zoo/.hermes/state.db",
  "/home/zoo/project/link-to-home": "/home/zoo",
};

/** The analysis context of the zoo; symlinks resolved from ZOO_LINKS, never the real filesystem. */
export function zooContext(cwd = ZOO_CWD): AnalysisContext {
  return {
    cwd,
    home: ZOO_HOME,
    hermesHome: ZOO_HERMES,
    roots: { ...guardRoots(ZOO_HERMES, { HOME: ZOO_HOME }), homes: [ZOO_HOME], hermesHomes: [ZOO_HERMES] },
    realPath: (p) => {
      for (const [link, target] of Object.entries(ZOO_LINKS)) {
        if (p === link || p.startsWith(`${link}/`)) return target + p.slice(link.length);
      }
      return p;
    },
  };
}

/** `inner` nested `levels` deep in command substitutions and `bash -c`. */
export function nested(levels: number, inner: string): string {
  let cmd = inner;
  for (let i = 0; i < levels; i++)
    cmd = i % 2 === 0 ? `echo $(${cmd})` : `bash -c "$(echo '${cmd.replace(/'/g, "")}')"`;
  return cmd;
}
