/**
 * `hermes doctor [--fix]`: checks the home, the config, the providers, the machine, the terminal
 * backend, MCP servers and gateway tokens, one ✓/⚠/✗ line each with the fix. `--fix` repairs what
 * is safe to repair (permissions of `.env`/`auth.json`, missing folders, the state.db schema),
 * then checks again. Exit 0 when nothing failed (warnings allowed), 1 otherwise.
 */
import { defineCommand } from "../command.js";
import { renderDoctor } from "../doctor/render.js";
import { gatherChecks, runRepairs } from "../doctor/run.js";

export const doctorCommand = defineCommand({
  name: "doctor",
  description:
    "check config, providers, files and tools; --fix repairs permissions, folders and the state.db schema",
  needs: "home",
  parse: (cmd) => cmd.option("--fix", "repair what can be repaired safely, then check again"),
  run: async (ctx, flags: { fix?: boolean }) => {
    const input = { home: ctx.home, cwd: process.cwd(), processEnv: ctx.io.env };
    let lines = await gatherChecks(input);
    if (flags.fix) {
      const outcomes = await runRepairs(lines);
      if (outcomes.length === 0) ctx.io.err("Nothing to repair.");
      for (const outcome of outcomes) {
        ctx.io.err(
          `${outcome.ok ? "repaired" : "could not repair"} ${outcome.line.name}: ${outcome.message}`,
        );
      }
      if (outcomes.length > 0) lines = await gatherChecks(input);
    }
    ctx.io.out(renderDoctor(lines, { color: ctx.io.color }));
    return lines.some((line) => line.status === "fail") ? 1 : 0;
  },
});
