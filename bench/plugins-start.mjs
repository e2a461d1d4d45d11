// One sample of the plugins bench (bench/plugins.ts), in a fresh plain-node process so the load is
// as cold as a real start: argv = lib path, home, cwd, fake LLM url, "with"|"none". Prints the ms
// from before loading plugins to the first turn's answer, and the CPU ms (user + system, every
// thread of the process) spent in that span.
import { performance } from "node:perf_hooks";

const [libPath, home, cwd, url, mode] = process.argv.slice(2);
const lib = await import(libPath);
const config = lib.defaultConfig();
const names = ["alpha", "beta", "gamma"];
if (mode === "with") config.plugins = { enabled: names, disabled: [] };
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, HERMES_HOME: home };
const resolved = lib.resolveRuntime({
  flags: { provider: "custom", baseUrl: url, model: "fake-model" },
  config: { ...config, model: { ...config.model, api_key: "sk-bench" } },
  env,
  home,
});
const started = performance.now();
const cpuAtStart = process.cpuUsage();
const registry = lib.createBuiltinRegistry();
const hooks = new lib.HookBus();
if (mode === "with") {
  const loaded = await lib.loadPlugins({
    home,
    config,
    env,
    registry,
    bus: hooks,
    onWarning: (m) => {
      throw new Error(`plugins bench: ${m}`);
    },
  });
  if (loaded.records.filter((r) => r.status === "loaded").length !== names.length)
    throw new Error("plugins bench: not every plugin loaded");
}
const session = await lib.ChatSession.open({
  resolved,
  config,
  home,
  cwd,
  env,
  registry,
  hooks,
  toolsets: ["todo"],
  retry: { maxRetries: 0 },
});
const result = await session.run("hello").result;
const elapsed = performance.now() - started;
const cpu = process.cpuUsage(cpuAtStart);
await session.close();
if (result.reason !== "completed") throw new Error(`plugins bench: ${result.reason} ${result.error ?? ""}`);
process.stdout.write(`${elapsed} ${(cpu.user + cpu.system) / 1000}\n`);
