/**
 * `hermes update`'s pure parts: version order, how an install is told from its path, and the
 * registry lookup against a loopback registry.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareVersions, detectInstallMethod } from "../../../../src/cli/update/install-method.js";
import { latestVersion, registryUrl, UpdateCheckError } from "../../../../src/cli/update/registry.js";

describe("version order", () => {
  it.each<[string, string, number]>([
    ["0.1.0", "0.2.0", -1],
    ["0.10.0", "0.9.9", 1],
    ["1.0.0", "1.0.0", 0],
    ["v1.2.3", "1.2.3", 0],
    ["1.0.0-beta.2", "1.0.0", -1],
    ["1.0.0", "1.0.0-rc.1", 1],
    ["1.0.0-alpha.10", "1.0.0-alpha.9", 1],
    ["1.0.0-alpha", "1.0.0-alpha.1", -1],
    ["1.0.0-alpha.1", "1.0.0-beta", -1],
    ["1.0.0+build.5", "1.0.0", 0],
  ])("%s vs %s → %d", (a, b, expected) => {
    expect(compareVersions(a, b)).toBe(expected);
  });
});

describe("install method", () => {
  it.each<[string, boolean, string, string]>([
    ["/home/u/src/hermes-ts", true, "git", "git pull --ff-only && npm ci && npm run build"],
    ["/usr/local/lib/node_modules/hermes-agent", false, "npm-global", "npm install -g hermes-agent@latest"],
    [
      "/home/u/.nvm/versions/node/v22.1.0/lib/node_modules/hermes-agent",
      false,
      "npm-global",
      "npm install -g hermes-agent@latest",
    ],
    [
      "/home/u/.local/share/pnpm/global/5/node_modules/hermes-agent",
      false,
      "pnpm-global",
      "pnpm add -g hermes-agent@latest",
    ],
    [
      "/home/u/.config/yarn/global/node_modules/hermes-agent",
      false,
      "yarn-global",
      "yarn global add hermes-agent@latest",
    ],
    [
      "/home/u/.bun/install/global/node_modules/hermes-agent",
      false,
      "bun-global",
      "bun add -g hermes-agent@latest",
    ],
    ["/home/u/.npm/_npx/3f2a/node_modules/hermes-agent", false, "npx", "npx hermes-agent@latest"],
    ["/home/u/project/node_modules/hermes-agent", false, "npm-local", "npm install hermes-agent@latest"],
    ["/opt/hermes", false, "unknown", "npm install -g hermes-agent@latest"],
  ])("%s", (root, hasGit, kind, command) => {
    const method = detectInstallMethod(root, "hermes-agent", hasGit);
    expect(method.kind).toBe(kind);
    expect(method.steps.map((s) => s.join(" ")).join(" && ")).toBe(command);
    // Only installs hermes can upgrade in place run by themselves.
    expect(method.automatic).toBe(
      ["git", "npm-global", "pnpm-global", "yarn-global", "bun-global"].includes(kind),
    );
  });

  it("a project install upgrades in the project", () => {
    expect(detectInstallMethod("/home/u/project/node_modules/hermes-agent", "hermes-agent", false).cwd).toBe(
      "/home/u/project",
    );
  });
});

describe("the registry", () => {
  let server: Server;
  let base = "";
  const seen: Array<{ url: string; accept: string }> = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url ?? "", accept: String(req.headers.accept) });
      if (req.url === "/hermes-agent") {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({ name: "hermes-agent", "dist-tags": { latest: "0.3.1", next: "0.4.0-rc.1" } }),
        );
      } else if (req.url === "/@nous%2fhermes") {
        res.end(JSON.stringify({ "dist-tags": { latest: "2.0.0" } }));
      } else if (req.url === "/broken") {
        res.end("<html>proxy login</html>");
      } else if (req.url === "/nolatest") {
        res.end(JSON.stringify({ "dist-tags": { latest: "; rm -rf /" } }));
      } else if (req.url === "/down") {
        res.statusCode = 503;
        res.end("busy");
      } else {
        res.statusCode = 404;
        res.end("{}");
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("reads the registry from npm_config_registry, with one trailing slash", () => {
    expect(registryUrl({})).toBe("https://registry.npmjs.org/");
    expect(registryUrl({ npm_config_registry: "http://mirror.local/npm" })).toBe("http://mirror.local/npm/");
    expect(registryUrl({ NPM_CONFIG_REGISTRY: "http://x/" })).toBe("http://x/");
  });

  it("answers dist-tags.latest with the abbreviated document", async () => {
    expect(await latestVersion("hermes-agent", base)).toBe("0.3.1");
    expect(seen.at(-1)?.accept).toContain("application/vnd.npm.install-v1+json");
    expect(await latestVersion("@nous/hermes", base)).toBe("2.0.0");
  });

  it.each<[string, RegExp]>([
    ["missing", /not published on http:\/\/127\.0\.0\.1/],
    ["down", /answered HTTP 503/],
    ["broken", /something other than JSON/],
    ["nolatest", /no latest version/],
  ])("%s → a clear UpdateCheckError", async (name, message) => {
    await expect(latestVersion(name, base)).rejects.toThrow(UpdateCheckError);
    await expect(latestVersion(name, base)).rejects.toThrow(message);
  });

  it("an unreachable registry says which and why", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(latestVersion("hermes-agent", `http://127.0.0.1:${port}/`)).rejects.toThrow(
      new RegExp(`could not reach the registry http://127.0.0.1:${port}/: .*ECONNREFUSED`),
    );
  });
});
