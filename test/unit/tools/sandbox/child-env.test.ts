import { delimiter } from "node:path";
import { describe, expect, it } from "vitest";
import { buildChildEnv, filterChildEnv, RPC_SOCKET_ENV } from "../../../../src/tools/sandbox/child-env.js";

describe("filterChildEnv", () => {
  it.each([
    ["PATH", true],
    ["HOME", true],
    ["LANG", true],
    ["LC_ALL", true],
    ["TERM", true],
    ["SHELL", true],
    ["TMPDIR", true],
    ["VIRTUAL_ENV", true],
    ["PYTHONPATH", true],
    ["HERMES_HOME", true],
    ["OPENAI_API_KEY", false],
    ["GITHUB_TOKEN", false],
    ["MY_PASSWORD", false],
    ["DB_PASSWD", false],
    ["AWS_SECRET_ACCESS_KEY", false],
    ["GOOGLE_APPLICATION_CREDENTIALS", false],
    ["SSH_AUTH_SOCK", false],
    ["AUTHOR_NAME", false],
    ["api_key", false],
    ["my_token", false],
    ["Secret_Thing", false],
    ["HERMES_YOLO_MODE", false],
    ["HERMES_INFERENCE_MODEL", false],
    ["hermes_max_iterations", false],
    ["HERMES_RPC_SOCKET", false],
  ])("%s kept: %s", (name, kept) => {
    expect(name in filterChildEnv({ [name]: "value" })).toBe(kept);
  });

  it("drops undefined values and does not change its input", () => {
    const input = { PATH: "/bin", EMPTY: undefined, OPENAI_API_KEY: "sk" };
    expect(filterChildEnv(input)).toEqual({ PATH: "/bin" });
    expect(input.OPENAI_API_KEY).toBe("sk");
  });
});

describe("buildChildEnv", () => {
  it("adds the socket, module paths and Python settings on top of the filtered env", () => {
    const env = buildChildEnv(
      { PATH: "/bin", PYTHONPATH: "/lib/py", GITHUB_TOKEN: "x", HERMES_RPC_SOCKET: "/elsewhere" },
      { socketPath: "/tmp/d/rpc.sock", moduleDir: "/tmp/d" },
    );
    expect(env).toEqual({
      PATH: "/bin",
      PYTHONPATH: `/tmp/d${delimiter}/lib/py`,
      NODE_PATH: "/tmp/d",
      PYTHONDONTWRITEBYTECODE: "1",
      PYTHONUNBUFFERED: "1",
      PYTHONIOENCODING: "utf-8",
      [RPC_SOCKET_ENV]: "/tmp/d/rpc.sock",
    });
  });
});
