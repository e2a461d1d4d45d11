/**
 * /profile: which profile this conversation runs in and where its home is, on every surface (as
 * upstream's "Active profile and home"). It never switches: a profile is a whole home (memory,
 * sessions, keys), so another one means another process, `hermes -p NAME` or a gateway started
 * under it.
 */
import { homedir } from "node:os";
import { readProfileMeta } from "../config/profile-meta.js";
import { activeProfile, profileNameForHome } from "../config/profiles.js";
import type { CommandDef } from "./types.js";

export interface ProfileCommandDeps {
  /** The user's home directory (the one holding `~/.hermes`); injected by tests. */
  userHome?: () => string;
}

export function createProfileCommand(deps: ProfileCommandDeps = {}): CommandDef {
  const userHome = deps.userHome ?? (() => homedir());
  return {
    name: "profile",
    description: "show the active profile and its home",
    category: "Info",
    availableWhileRunning: true,
    // It shows the host's paths; in a chat that is for the people who run the agent.
    adminOnly: true,
    run(args, ctx) {
      const home = ctx.session.agent.home;
      const user = userHome();
      const name = profileNameForHome(home, user);
      const s = ctx.paint;
      if (args.trim() !== "") {
        const wanted = args.trim().split(/\s+/)[0] ?? "";
        throw new Error(
          ctx.surface.kind === "repl"
            ? `/profile does not switch profiles: each one is a separate home (memory, sessions, keys). Start another with: hermes -p ${wanted}`
            : `/profile does not switch profiles: this gateway serves "${name ?? home}". Run a gateway under the other one: hermes -p ${wanted} gateway run`,
        );
      }
      const rows: Array<[string, string]> = [
        ["Profile", name ?? "custom (HERMES_HOME outside ~/.hermes)"],
        ["Home", home],
      ];
      const description = readProfileMeta(home).description;
      if (description) rows.push(["About", description]);
      const sticky = activeProfile(user);
      if (name !== undefined && sticky !== name)
        rows.push(["Sticky", `${sticky} (what hermes runs without -p)`]);
      const lines = s.table ? s.table(rows) : rows.map(([k, v]) => `${`${k}:`.padEnd(9)}${v}`);
      ctx.reply(...lines);
    },
  };
}

export const PROFILE_COMMANDS: readonly CommandDef[] = [createProfileCommand()];
