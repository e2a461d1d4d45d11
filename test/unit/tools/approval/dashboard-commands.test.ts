/**
 * The agent must not start `hermes dashboard`: the start prints a URL whose token lets its holder
 * change config.yaml and approve staged writes through the API, which the terminal itself may not
 * (`hermes config set`, `hermes skills approve` are protected). Stopping the user's dashboard is
 * asked like stopping the gateway; `--status` and `--hash-password` show no token and stay free.
 */
import { describe, expect, it } from "vitest";
import { analyseCommand } from "../../../../src/tools/approval/index.js";
import { zooContext } from "../../../support/command-zoo.js";

describe("hermes dashboard in the terminal", () => {
  it.each([
    "hermes dashboard",
    "hermes dashboard --no-open",
    "hermes dashboard --no-open --port 0 &",
    "nohup hermes dashboard --no-open > /tmp/d.log 2>&1 &",
    "hermes -p work dashboard --no-open",
    "hermes --profile work dashboard",
    "hermes --profile=work dashboard --port 9200",
    "hermes dashboard --status --no-open",
    "cd /tmp && hermes dashboard --host 127.0.0.1",
    "bash -c 'hermes dashboard --no-open'",
    "env HERMES_HOME=/home/zoo/.hermes hermes dashboard",
    "setsid hermes dashboard --no-open",
    "timeout 60 hermes dashboard --no-open",
    "/usr/local/bin/hermes dashboard --no-open",
    "npx hermes dashboard --no-open",
    "npx -y hermes@latest dashboard",
    "pnpm dlx hermes dashboard",
    "h=hermes; $h dashboard --no-open",
  ])("starting one is only for the user: %s", (command) => {
    const verdict = analyseCommand(command, zooContext());
    expect(verdict).toMatchObject({ dangerous: true, protectedPath: true });
    expect(verdict.reason).toMatch(/dashboard/);
  });

  it.each(["hermes dashboard --stop", "hermes -p work dashboard --stop"])(
    "stopping the user's one is asked: %s",
    (command) => {
      const verdict = analyseCommand(command, zooContext());
      expect(verdict.dangerous).toBe(true);
      expect(verdict.protectedPath).toBe(false);
      expect(verdict.reason).toContain("stops the user's dashboard");
    },
  );

  it.each([
    "hermes dashboard --status",
    "hermes -p work dashboard --status",
    "printf '%s' 'a long password' | hermes dashboard --hash-password",
    "hermes dashboard --help",
    "hermes sessions search dashboard",
    "hermes -q 'open the dashboard'",
    "grep -r dashboard ~/notes",
    "npm run dashboard",
    "git log --oneline -- src/dashboard",
  ])("what shows no token stays free: %s", (command) => {
    const verdict = analyseCommand(command, zooContext());
    expect(verdict.protectedPath).toBe(false);
    expect(verdict.dangerous).toBe(false);
  });
});
