/**
 * `hermes memory pending|approve|reject`: memory writes the agent staged while
 * `memory.write_approval` is on, added to `hermes memory` (memory.ts, which has the provider verbs
 * `setup|status|off|reset`). Exit codes: 0 done, 1 an id was unknown or a write could not be applied, 2 usage or configuration error.
 */
import type { Command } from "commander";
import { type Action, type HomeContext, withConfig } from "../command.js";
import { withHomeKnowledge } from "./home-knowledge.js";
import { approveCli, type PendingCliContext, pendingListCli, rejectCli } from "./write-approval.js";

/** Adds `pending`, `approve` and `reject` to `hermes memory` (built in memory.ts). */
export function addMemoryPendingCommands(root: Command, action: Action<HomeContext>): void {
  // The config says whether the gate is on and how writes apply: loaded for these verbs only.
  const run = <A extends unknown[]>(body: (ctx: PendingCliContext, ...args: A) => Promise<number> | number) =>
    action((ctx: HomeContext, ...args: A) => {
      const { home, config, io } = withConfig(ctx);
      return body({ home, config, io }, ...args);
    });
  root
    .command("pending")
    .alias("list")
    .description("list memory writes the agent staged for approval")
    .option("--json", "print JSON")
    .action(
      run((ctx, flags: { json?: boolean }) =>
        // Staged on any instance: the shared database's on a postgres home.
        withHomeKnowledge(ctx.home, ctx.io.env, () => pendingListCli(ctx, "memory", flags)),
      ),
    );

  root
    .command("approve")
    .description(
      "apply a staged memory write (or all of them), with the same limits and checks as a direct write",
    )
    .argument("<id>", "the pending id, or all")
    .option("--json", "print JSON")
    .action(
      run((ctx, id: string, flags: { json?: boolean }) =>
        // Applied to the home's memory store: the shared database's entries on a postgres home.
        withHomeKnowledge(ctx.home, ctx.io.env, async () => approveCli(ctx, "memory", id, flags)),
      ),
    );

  root
    .command("reject")
    .description("drop a staged memory write (or all of them) without applying it")
    .argument("<id>", "the pending id, or all")
    .option("--json", "print JSON")
    .action(
      run((ctx, id: string, flags: { json?: boolean }) =>
        withHomeKnowledge(ctx.home, ctx.io.env, () => rejectCli(ctx, "memory", id, flags)),
      ),
    );
}
