import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe } from "vitest";
import { bashChannel } from "../../support/bash-channel.js";
import { remoteShellCases } from "./remote-shell-cases.js";

describe("remote shell over a local channel", () => {
  remoteShellCases(async () => ({
    channel: bashChannel({ PATH: process.env.PATH, HOME: process.env.HOME }),
    dir: realpathSync(mkdtempSync(join(tmpdir(), "hermes-remote-shell-"))),
  }));
});
