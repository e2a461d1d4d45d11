/**
 * `hermes tools`, `hermes logs`, `hermes completion` and `hermes update` through the built CLI:
 * a toolset disabled with `hermes tools` is really withheld from the model on the next run (and
 * offered again once enabled); the log files are shown, filtered and followed across a rotation;
 * the bash completion script, sourced in bash, completes commands, subcommands, options and their
 * values; `update --check` against a loopback registry fake through `npm_config_registry`.
 */

import { spawn, spawnSync } from "node:child_process";
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeProviderConfig, HERMES_BIN, runHermes, spawnHermes, tempHome } from "../support/cli.js";
import { reply } from "../support/fake-llm.js";
import { useFakeLlm } from "../support/fake-llm-per-file.js";

const llm = useFakeLlm();

/** Tool names offered in the last model request. */
function offeredTools(): string[] {
  const body = llm.chatRequests.at(-1)?.body as { tools?: Array<{ function: { name: string } }> } | undefined;
  return (body?.tools ?? []).map((t) => t.function.name);
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("hermes tools", () => {
  it("a disabled toolset is withheld from the model on the next run, and offered again once enabled", async () => {
    const h = tempHome(
      `# my notes stay\n${fakeProviderConfig(llm.url)}mcp_servers:\n  gh:\n    command: /bin/false\n    enabled: false\n`,
    );
    const off = await runHermes(["tools", "disable", "terminal", "web", "gh:delete_repo"], h);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain("Disabled for cli: terminal, web, gh:delete_repo");
    const yaml = readFileSync(join(h.home, "config.yaml"), "utf8");
    expect(yaml).toContain("# my notes stay");
    expect(yaml).toMatch(/exclude:[\s\S]*delete_repo/);

    const list = await runHermes(["tools", "list"], h);
    expect(list.stdout).toMatch(/✗ disabled\s+terminal/);
    expect(list.stdout).toMatch(/✓ enabled\s+file/);
    expect(list.stdout).toMatch(/gh\s+\[excluded: delete_repo\]/);

    llm.enqueue(reply().text("ok"));
    const run = await runHermes(["-z", "what tools do you have?"], h);
    expect(run.code, run.stderr).toBe(0);
    const tools = offeredTools();
    expect(tools).toContain("read_file");
    expect(tools).not.toContain("terminal");
    expect(tools).not.toContain("process");
    expect(tools).not.toContain("web_extract");

    const on = await runHermes(["tools", "enable", "terminal"], h);
    expect(on.code, on.stderr).toBe(0);
    llm.enqueue(reply().text("ok"));
    expect((await runHermes(["-z", "and now?"], h)).code).toBe(0);
    expect(offeredTools()).toContain("terminal");
    expect(offeredTools()).not.toContain("web_extract");

    // -t still wins for one run.
    llm.enqueue(reply().text("ok"));
    expect((await runHermes(["-t", "web", "-z", "only web?"], h)).code).toBe(0);
    expect(offeredTools().sort()).toEqual(["web_extract", "web_search"]);
  });

  it("refuses unknown toolsets, servers and platforms (exit 2, nothing written) and summarises", async () => {
    const h = tempHome("model: x\n");
    const bad = await runHermes(["tools", "disable", "teleport", "nosuch:tool"], h);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Unknown toolset "teleport"');
    expect(bad.stderr).toContain('MCP server "nosuch" is not in mcp_servers');
    expect(readFileSync(join(h.home, "config.yaml"), "utf8")).toBe("model: x\n");
    const platform = await runHermes(["tools", "list", "--platform", "myspace"], h);
    expect(platform.code).toBe(2);
    expect(platform.stderr).toMatch(/'myspace' is invalid\. Allowed choices are cli, cron, telegram/);

    expect((await runHermes(["tools", "disable", "memory", "--platform", "telegram"], h)).code).toBe(0);
    const summary = await runHermes(["tools", "--summary"], h);
    expect(summary.code, summary.stderr).toBe(0);
    expect(summary.stdout).toMatch(/cli\s+\d+\/16 toolsets \(default\)/);
    expect(summary.stdout).toMatch(
      /telegram\s+14\/16 toolsets \(platform_toolsets\)\s+off: memory, homeassistant/,
    );
  });
});

describe("hermes logs", () => {
  const now = Date.now();
  const iso = (agoMs: number) => new Date(now - agoMs).toISOString();

  function homeWithLogs() {
    const h = tempHome("");
    const logs = join(h.home, "logs");
    mkdirSync(logs, { recursive: true });
    writeFileSync(join(logs, "agent.log.1"), `${iso(3 * 86_400_000)} INFO s-old cli: rotated away\n`);
    writeFileSync(
      join(logs, "agent.log"),
      [
        `${iso(2 * 3_600_000)} INFO s-aaa cli: two hours ago`,
        `${iso(60_000)} WARNING s-bbb agent: slow provider`,
        `${iso(30_000)} ERROR s-aaa gateway.telegram: send failed`,
        `${iso(10_000)} INFO s-bbb cli: latest`,
      ].join("\n") + "\n",
    );
    return h;
  }

  it("shows the last lines, filtered, with the header on stderr; list shows the files", async () => {
    const h = homeWithLogs();
    const last = await runHermes(["logs", "-n", "2"], h);
    expect(last.code, last.stderr).toBe(0);
    expect(
      last.stdout
        .trim()
        .split("\n")
        .map((l) => l.split(": ")[1]),
    ).toEqual(["send failed", "latest"]);
    expect(last.stderr).toMatch(/--- .*agent\.log \(last 2\) ---/);

    const all = await runHermes(["logs", "-n", "10"], h);
    expect(all.stdout).toContain("rotated away");

    const warn = await runHermes(["logs", "--level", "warn", "--since", "1h"], h);
    expect(
      warn.stdout
        .trim()
        .split("\n")
        .map((l) => l.split(": ")[1]),
    ).toEqual(["slow provider", "send failed"]);
    const session = await runHermes(["logs", "--session", "s-aaa", "--component", "gateway"], h);
    expect(session.stdout.trim()).toMatch(/send failed$/);

    const list = await runHermes(["logs", "list"], h);
    expect(list.stdout).toMatch(/agent\.log\s+\d+ B\s+just now/);
    expect(list.stdout).toContain("agent.log.1");

    const missing = await runHermes(["logs", "errors"], h);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No errors.log yet");
    expect(missing.stderr).toContain("try hermes chat");
    const noGateway = await runHermes(["logs", "gateway"], h);
    expect(noGateway.code).toBe(1);
    expect(noGateway.stderr).toContain("written once the gateway runs (hermes gateway)");
    for (const args of [
      ["logs", "--since", "yesterday"],
      ["logs", "bogus"],
      ["logs", "-n", "ten"],
    ]) {
      const bad = await runHermes(args, h);
      expect(bad.code, args.join(" ")).toBe(2);
    }
  });

  it("-f prints new lines as they are written, across a rotation, and stops on Ctrl+C", async () => {
    const h = homeWithLogs();
    const file = join(h.home, "logs", "agent.log");
    const follow = spawnHermes(["logs", "-f", "-n", "0", "--level", "WARNING"], h);
    await waitFor(() => follow.output().stderr.includes("following"), "the header");
    appendFileSync(file, `${new Date().toISOString()} INFO - cli: quiet line\n`);
    appendFileSync(file, `${new Date().toISOString()} ERROR - cli: first alarm\n`);
    await waitFor(() => follow.output().stdout.includes("first alarm"), "the first new line");
    renameSync(file, `${file}.1`);
    writeFileSync(file, `${new Date().toISOString()} ERROR - cli: after rotation\n`);
    await waitFor(() => follow.output().stdout.includes("after rotation"), "the line after rotation");
    follow.child.kill("SIGINT");
    const done = await follow.exited;
    expect(done.code).toBe(0);
    expect(done.stdout).not.toContain("quiet line");
    expect(done.stdout).not.toContain("latest");
  });
});

describe("hermes completion", () => {
  it("the bash script, sourced in bash, completes commands, subcommands, options and values", async () => {
    const h = tempHome("");
    const script = await runHermes(["completion", "bash"], h);
    expect(script.code, script.stderr).toBe(0);
    const path = join(h.cwd, "hermes.bash");
    writeFileSync(path, script.stdout);
    const probe = [
      `source ${JSON.stringify(path)}`,
      // biome-ignore lint/suspicious/noTemplateCurlyInString: bash, not a template
      'comp() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _hermes; echo "${COMPREPLY[*]}"; }',
      "comp hermes lo",
      "comp hermes -p work se",
      "comp hermes tools ''",
      "comp hermes tools enable --pl",
      "comp hermes tools enable --platform tele",
      "comp hermes logs ''",
      "comp hermes logs --level W",
      "comp hermes sessions li",
      "comp hermes completion z",
      "complete -p hermes",
    ].join("\n");
    const bash = spawnSync("bash", ["--norc", "--noprofile", "-c", probe], { encoding: "utf8" });
    expect(bash.stderr).toBe("");
    expect(bash.stdout.split("\n")).toEqual([
      "login logout logs",
      "setup sessions send",
      "list enable disable",
      "--platform",
      "telegram",
      "agent errors gateway gui desktop mcp list",
      "WARNING",
      "list",
      "zsh",
      "complete -o bashdefault -o default -F _hermes hermes",
      "",
    ]);
    const bad = await runHermes(["completion", "powershell"], h);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("bash, zsh, fish");
  });

  it.skipIf(spawnSync("zsh", ["--version"]).status !== 0)(
    "the zsh script loads in zsh with compinit, registers _hermes, and completes like bash",
    async () => {
      const h = tempHome("");
      const script = await runHermes(["completion", "zsh"], h);
      expect(script.code, script.stderr).toBe(0);
      const path = join(h.cwd, "_hermes.zsh");
      writeFileSync(path, script.stdout);
      // _describe and compadd only work inside a completion widget: stand-ins print the candidates
      // matching the word, so the script's own logic (run by zsh) decides what is offered.
      const probe = [
        "autoload -U compinit && compinit -u -D",
        `source ${JSON.stringify(path)}`,
        // biome-ignore lint/suspicious/noTemplateCurlyInString: zsh, not a template
        'print -r -- "registered=${_comps[hermes]}"',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: zsh, not a template
        '_describe() { local out=(); for e in ${(P)4}; do n=${e%%:*}; [[ $n == ${cur}* ]] && out+=($n); done; print -r -- "${out[*]}"; }',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: zsh, not a template
        'compadd() { shift; local out=(); for e in "$@"; do [[ $e == ${cur}* ]] && out+=($e); done; print -r -- "${out[*]}"; }',
        '_files() { print -r -- "<files>"; }',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: zsh, not a template
        'comp() { words=("$@"); CURRENT=${#words}; _hermes; }',
        "comp hermes lo",
        "comp hermes -p work se",
        "comp hermes tools ''",
        "comp hermes tools enable --pl",
        "comp hermes tools enable --platform tele",
        "comp hermes logs --level W",
        "comp hermes completion z",
        "comp hermes --image ''",
      ].join("\n");
      const zsh = spawnSync("zsh", ["-f", "-c", probe], {
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "" },
      });
      expect(zsh.stderr).toBe("");
      expect(zsh.stdout.split("\n")).toEqual([
        "registered=_hermes",
        "login logout logs",
        "setup sessions send",
        "list enable disable",
        "--platform",
        "telegram",
        "WARNING",
        "zsh",
        "<files>",
        "",
      ]);
    },
  );

  it.skipIf(spawnSync("fish", ["--version"]).status !== 0)(
    "the fish script, sourced in fish, completes commands after -p, subcommands, options and values",
    async () => {
      const h = tempHome("");
      const script = await runHermes(["completion", "fish"], h);
      expect(script.code, script.stderr).toBe(0);
      const path = join(h.cwd, "hermes.fish");
      writeFileSync(path, script.stdout);
      const words = (line: string) =>
        line
          .trim()
          .split("\n")
          .map((l) => l.split("\t")[0])
          .join(" ");
      const cases: Array<[string, string]> = [
        ["hermes lo", "login logout logs"],
        ["hermes -p work se", "send sessions setup"],
        ["hermes tools ", "disable enable list"],
        ["hermes tools enable --platform tele", "telegram"],
        ["hermes logs --level W", "WARNING"],
        ["hermes completion z", "zsh"],
      ];
      const probe = [
        `source ${JSON.stringify(path)}`,
        ...cases.map(([line]) => `complete -C${JSON.stringify(line)}; echo '<end>'`),
      ].join("; ");
      const fish = spawnSync("fish", ["--no-config", "-c", probe], {
        encoding: "utf8",
        env: { PATH: process.env.PATH ?? "", HOME: h.home },
      });
      expect(fish.stderr).toBe("");
      const answers = fish.stdout.split("<end>\n").slice(0, cases.length).map(words);
      expect(answers).toEqual(cases.map(([, expected]) => expected));
    },
  );

  it("refuses an unknown shell", async () => {
    const h = tempHome("");
    const bad = await runHermes(["completion", "powershell"], h);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("bash, zsh, fish");
  });
});

describe("hermes update", () => {
  let registry: Server;
  let url = "";
  let latest = "99.0.0";
  beforeAll(async () => {
    registry = createServer((req, res) => {
      if (req.url === "/hermes-agent") res.end(JSON.stringify({ "dist-tags": { latest } }));
      else {
        res.statusCode = 404;
        res.end("{}");
      }
    });
    await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => registry.close(() => resolve())));

  it("--check says a newer version exists and how to upgrade this install (a git checkout here)", async () => {
    const h = tempHome("");
    latest = "99.0.0";
    const check = await runHermes(["update", "--check"], { ...h, env: { npm_config_registry: url } });
    expect(check.code, check.stderr).toBe(0);
    expect(check.stdout).toContain(`99.0.0 is the latest on ${url}`);
    expect(check.stdout).toContain("Installed as a git checkout in");
    expect(check.stdout).toContain("git pull --ff-only && npm ci && npm run build");

    // Without --check and without a terminal or -y, nothing is run.
    const update = await runHermes(["update"], { ...h, env: { npm_config_registry: url } });
    expect(update.code).toBe(1);
    expect(update.stderr).toContain("Nothing was changed");

    latest = "0.0.1";
    const current = await runHermes(["update", "--check"], { ...h, env: { npm_config_registry: url } });
    expect(current.code).toBe(0);
    expect(current.stdout).toMatch(/is up to date \(newer than the registry's latest, 0\.0\.1\)/);
  });

  it("-y upgrades a global npm install in its prefix from the registry, and says to what", async () => {
    const h = tempHome("");
    const root = join(h.cwd, "..");
    // The new version's tarball, as npm publishes it (package/ inside).
    const pkgDir = join(root, "pack", "package");
    mkdirSync(join(pkgDir, "bin"), { recursive: true });
    writeFileSync(
      join(pkgDir, "package.json"),
      JSON.stringify({ name: "hermes-agent", version: "99.0.0", bin: { hermes: "bin/hermes" } }),
    );
    writeFileSync(join(pkgDir, "bin", "hermes"), "#!/bin/sh\necho upgraded\n", { mode: 0o755 });
    const tgz = join(root, "hermes-agent-99.0.0.tgz");
    expect(spawnSync("tar", ["czf", tgz, "-C", join(root, "pack"), "package"]).status).toBe(0);
    const tarball = readFileSync(tgz);
    const { createHash } = await import("node:crypto");
    const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
    const shasum = createHash("sha1").update(tarball).digest("hex");
    const fake = createServer((req, res) => {
      const base = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
      if (req.url === "/hermes-agent") {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            name: "hermes-agent",
            "dist-tags": { latest: "99.0.0" },
            versions: {
              "99.0.0": {
                name: "hermes-agent",
                version: "99.0.0",
                bin: { hermes: "bin/hermes" },
                dist: { tarball: `${base}/hermes-agent/-/hermes-agent-99.0.0.tgz`, integrity, shasum },
              },
            },
          }),
        );
      } else if (req.url === "/hermes-agent/-/hermes-agent-99.0.0.tgz") res.end(tarball);
      else {
        res.statusCode = 404;
        res.end("{}");
      }
    });
    await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
    try {
      const fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}/`;
      // The installed copy: version 0.0.1 in <prefix>/lib/node_modules/hermes-agent, running the
      // real CLI through a link to this build's launcher.
      const prefix = join(root, "prefix");
      const installed = join(prefix, "lib", "node_modules", "hermes-agent");
      mkdirSync(join(installed, "bin"), { recursive: true });
      writeFileSync(
        join(installed, "package.json"),
        JSON.stringify({
          name: "hermes-agent",
          version: "0.0.1",
          type: "module",
          bin: { hermes: "bin/hermes" },
        }),
      );
      // A copy of the launcher (a link would resolve to this checkout, a git install) beside a
      // link to this build's bundles.
      copyFileSync(HERMES_BIN, join(installed, "bin", "hermes"));
      // The launcher is CommonJS through its own bin/package.json, as the package ships it.
      copyFileSync(join(dirname(HERMES_BIN), "package.json"), join(installed, "bin", "package.json"));
      symlinkSync(join(HERMES_BIN, "..", "..", "dist"), join(installed, "dist"));
      const env = {
        npm_config_registry: fakeUrl,
        npm_config_prefix: prefix,
        npm_config_cache: join(root, "npm-cache"),
        npm_config_audit: "false",
        npm_config_fund: "false",
        npm_config_update_notifier: "false",
      };
      // Asynchronously: the fake registry answers from this process.
      const child = spawn(process.execPath, [join(installed, "bin", "hermes"), "update", "-y"], {
        cwd: h.cwd,
        env: { PATH: process.env.PATH ?? "", HOME: h.home, HERMES_HOME: h.home, NO_COLOR: "1", ...env },
      });
      const run = { status: null as number | null, stdout: "", stderr: "" };
      child.stdout.on("data", (d: Buffer) => (run.stdout += d.toString("utf8")));
      child.stderr.on("data", (d: Buffer) => (run.stderr += d.toString("utf8")));
      run.status = await new Promise<number | null>((resolve) => child.on("close", resolve));
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      expect(run.stdout).toContain(`is installed; 99.0.0 is the latest on ${fakeUrl}`);
      expect(run.stderr).toContain("$ npm install -g");
      expect(run.stdout).toContain("Upgraded to hermes 99.0.0");
      expect(JSON.parse(readFileSync(join(installed, "package.json"), "utf8")).version).toBe("99.0.0");
      expect(spawnSync(join(prefix, "bin", "hermes"), [], { encoding: "utf8" }).stdout).toBe("upgraded\n");
    } finally {
      await new Promise<void>((resolve) => fake.close(() => resolve()));
    }
  });

  it("an unreachable registry fails with which one and why", async () => {
    const h = tempHome("");
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = await runHermes(["update", "--check"], {
      ...h,
      env: { npm_config_registry: `http://127.0.0.1:${port}` },
    });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain(`hermes update: could not reach the registry http://127.0.0.1:${port}/`);
  });
});
