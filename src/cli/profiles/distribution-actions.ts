/**
 * `hermes profile install <source>` and `hermes profile update <name>`: the plan shown on stderr,
 * a confirmation (skipped with -y; refused without a terminal, as `profile delete` does), then the
 * copy (distribution.ts). Errors are ProfileErrors, exit 2 through the command wrapper.
 */
import { createInterface } from "node:readline/promises";
import { hermesVersion } from "../../util/version.js";
import { CliFailure } from "../command.js";
import { type DistributionPlan, installDistribution, updateDistribution } from "./distribution.js";
import { aliasAfterCreate, type ExtrasCtx } from "./profile-extras.js";

export interface InstallFlags {
  name?: string;
  alias?: boolean;
  force?: boolean;
  yes?: boolean;
}

export async function installAction(ctx: ExtrasCtx, source: string, flags: InstallFlags): Promise<number> {
  const { io, userHome } = ctx;
  const plan = await installDistribution({
    source,
    userHome,
    version: hermesVersion(),
    name: flags.name,
    force: flags.force,
    confirm: (p) => confirmPlan(ctx, p, flags.yes === true, "install"),
  });
  if (!plan) {
    io.err("Cancelled; nothing was installed.");
    return 1;
  }
  io.out(`Installed distribution "${plan.name}" ${plan.version} as profile "${plan.name}": ${plan.target}`);
  if (flags.alias) aliasAfterCreate(ctx, plan.name);
  if (plan.envRequired.length > 0) {
    io.out(
      `It needs: ${plan.envRequired.join(", ")}; see ${plan.target}/.env.EXAMPLE and set them in ${plan.target}/.env`,
    );
  }
  io.out(
    `Use it with: hermes -p ${plan.name} chat; update it later with: hermes profile update ${plan.name}`,
  );
  return 0;
}

export async function updateAction(
  ctx: ExtrasCtx,
  name: string,
  flags: { forceConfig?: boolean; yes?: boolean },
): Promise<number> {
  const { io, userHome } = ctx;
  const plan = await updateDistribution({
    name,
    userHome,
    version: hermesVersion(),
    forceConfig: flags.forceConfig,
    confirm: (p) => confirmPlan(ctx, p, flags.yes === true, "update", flags.forceConfig === true),
  });
  if (!plan) {
    io.err("Cancelled; nothing was changed.");
    return 1;
  }
  io.out(`Updated profile "${name}" to ${plan.version} from ${plan.source}.`);
  io.out(
    flags.forceConfig
      ? "config.yaml was replaced by the distribution's (--force-config)."
      : "config.yaml was kept; pass --force-config to take the distribution's.",
  );
  return 0;
}

async function confirmPlan(
  { io }: ExtrasCtx,
  plan: DistributionPlan,
  yes: boolean,
  verb: "install" | "update",
  forceConfig = false,
): Promise<boolean> {
  const lines = [
    `Distribution: ${plan.name} ${plan.version}${plan.description ? ` (${plan.description})` : ""}`,
    `Source:       ${plan.source}`,
    `Profile:      ${plan.target}${plan.existing ? " (exists)" : ""}`,
    `Skills:       ${plan.skills}`,
  ];
  if (plan.hasCron)
    lines.push("Cron jobs:    yes (they run on their schedule once a gateway runs in this profile)");
  if (verb === "update") {
    lines.push(
      forceConfig
        ? "config.yaml:  replaced by the distribution's"
        : "config.yaml:  kept (--force-config replaces it)",
    );
  }
  lines.push("Kept as they are: .env, auth.json, memories, sessions, state.db, logs, local/");
  for (const line of lines) io.err(line);
  if (yes) return true;
  if (io.stdin.isTTY !== true) {
    throw new CliFailure(
      `profile ${verb} needs confirmation and stdin is not a terminal; pass -y to confirm.`,
      2,
    );
  }
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  const answer = await rl.question(`Proceed with the ${verb}? [y/N] `).finally(() => rl.close());
  return /^y(es)?$/i.test(answer.trim());
}
