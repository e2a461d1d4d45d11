import { describe, expect, it } from "vitest";
import { childEnvironment } from "../../../../src/tools/mcp/env.js";

describe("a stdio server's environment", () => {
  it("passes only what a program needs, then the server's own env", () => {
    const env = childEnvironment(
      {
        PATH: "/usr/bin",
        HOME: "/home/me",
        USER: "me",
        LANG: "en_GB.UTF-8",
        LC_ALL: "C",
        TERM: "xterm",
        SHELL: "/bin/bash",
        TMPDIR: "/tmp",
        XDG_CONFIG_HOME: "/home/me/.config",
        OPENROUTER_API_KEY: "sk-or-secret",
        AWS_SECRET_ACCESS_KEY: "aws-secret",
        LOGNAME: "me",
        UNSET: undefined,
      },
      { API_TOKEN: "for-this-server", PATH: "/opt/server/bin" },
    );
    expect(env).toEqual({
      PATH: "/opt/server/bin",
      HOME: "/home/me",
      USER: "me",
      LANG: "en_GB.UTF-8",
      LC_ALL: "C",
      TERM: "xterm",
      SHELL: "/bin/bash",
      TMPDIR: "/tmp",
      XDG_CONFIG_HOME: "/home/me/.config",
      API_TOKEN: "for-this-server",
    });
  });

  it("never passes an exported shell function", () => {
    expect(childEnvironment({ SHELL: "() { evil; }", HOME: "/h" })).toEqual({ HOME: "/h" });
  });
});
