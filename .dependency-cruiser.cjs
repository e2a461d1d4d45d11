/**
 * Layer rules from ARCHITECTURE.md: each layer imports only from the layers above it.
 * util(0) <- config(1) <- ai(2) <- state(3) <- knowledge(4) <- environments(4.5) <- tools(5)
 * <- agent(6) <- commands(7) <- surfaces(8). Environments use only util and config. The slash commands sit below both surfaces so the REPL and the chats share them.
 */
const layers = [
  { name: "util", path: "^src/util/", allowed: [] },
  { name: "config", path: "^src/config/", allowed: ["util"] },
  { name: "ai", path: "^src/ai/", allowed: ["util", "config"] },
  { name: "state", path: "^src/state/", allowed: ["util", "config", "ai-types"] },
  { name: "knowledge", path: "^src/knowledge/", allowed: ["util", "config", "ai", "state"] },
  { name: "environments", path: "^src/environments/", allowed: ["util", "config"] },
  {
    name: "tools",
    path: "^src/tools/",
    allowed: ["util", "config", "ai", "state", "knowledge", "environments"],
  },
  {
    name: "agent",
    path: "^src/agent/",
    allowed: ["util", "config", "ai", "state", "knowledge", "environments", "tools"],
  },
  {
    name: "commands",
    path: "^src/commands/",
    allowed: ["util", "config", "ai", "state", "knowledge", "environments", "tools", "agent"],
  },
  {
    // The ACP server (`hermes acp`): a surface above the agent; only src/cli/ imports it.
    name: "acp",
    path: "^src/acp/",
    allowed: ["util", "config", "ai", "state", "knowledge", "environments", "tools", "agent", "commands"],
  },
  // A surface (Atropos RL environments): rollouts run through the agent; never the CLI or gateway.
  {
    name: "rl",
    path: "^src/rl/",
    allowed: ["util", "config", "ai", "state", "knowledge", "environments", "tools", "agent"],
  },
  {
    // Plugins (src/plugins/): between the slash commands and the surfaces that load them.
    name: "plugins",
    path: "^src/plugins/",
    allowed: ["util", "config", "ai", "state", "knowledge", "environments", "tools", "agent", "commands"],
  },
  {
    // Batch runs and trajectory compression: a surface over the agent; the CLI imports it.
    name: "batch",
    path: "^src/batch/",
    allowed: ["util", "config", "ai", "state", "knowledge", "environments", "tools", "agent"],
  },
  {
    // The web dashboard (`hermes dashboard`): a surface beside the gateway; only src/cli/ imports it.
    name: "dashboard",
    path: "^src/dashboard/",
    allowed: ["util", "config", "ai", "state", "knowledge", "environments", "tools", "agent", "commands"],
  },
];
const paths = {
  util: "^src/util/",
  config: "^src/config/",
  ai: "^src/ai/",
  "ai-types": "^src/ai/types\\.ts$",
  state: "^src/state/",
  knowledge: "^src/knowledge/",
  environments: "^src/environments/",
  tools: "^src/tools/",
  agent: "^src/agent/",
  commands: "^src/commands/",
};
const forbidden = layers.map((layer) => ({
  name: `layer-${layer.name}`,
  comment: `${layer.name} may import only: ${layer.allowed.join(", ") || "node built-ins"}`,
  severity: "error",
  from: { path: layer.path },
  to: {
    path: "^src/",
    pathNot: [layer.path, ...layer.allowed.map((a) => paths[a])],
  },
}));
forbidden.push(
  {
    name: "no-surface-imports",
    comment: "Nothing imports from cli/ or gateway/ (surfaces are leaves)",
    severity: "error",
    from: { path: "^src/", pathNot: "^src/(cli|lib|gateway|dashboard)/" },
    to: { path: "^src/(cli|gateway|dashboard)/" },
  },
  {
    name: "gateway-not-cli",
    comment: "The gateway's modules may use each other, never the CLI",
    severity: "error",
    from: { path: "^src/gateway/" },
    to: { path: "^src/cli/" },
  },
  {
    name: "repl-not-gateway",
    comment:
      "The interactive REPL and the commands it runs never use the gateway (they share src/commands/)",
    severity: "error",
    from: { path: "^src/cli/(tui/|commands/repl\\.ts$)" },
    to: { path: "^src/gateway/" },
  },
  {
    name: "dashboard-not-gateway",
    comment:
      "The dashboard reads the gateway's stores from state/gateway/ and its live state over the control socket, never gateway/",
    severity: "error",
    from: { path: "^src/dashboard/" },
    to: { path: "^src/gateway/" },
  },
  {
    name: "dashboard-web-alone",
    comment:
      "The dashboard's browser code (src/dashboard/web/) is bundled for the page: it talks to the server only over /api/ and imports nothing else from src/",
    severity: "error",
    from: { path: "^src/dashboard/web/" },
    to: { path: "^src/", pathNot: "^src/dashboard/web/" },
  },
  {
    name: "dashboard-server-not-web",
    comment: "The dashboard's server serves the built page as files; it never imports the browser code",
    severity: "error",
    from: { path: "^src/", pathNot: "^src/dashboard/web/" },
    to: { path: "^src/dashboard/web/" },
  },
  {
    name: "references-not-in-chats",
    comment:
      "@ references read the host's files: the CLI expands them, chats never (their users must not read the host)",
    severity: "error",
    from: { path: "^src/(gateway|commands)/" },
    to: { path: "^src/agent/references/(expand|parse)\\.ts$" },
  },
  {
    name: "tool-registry-root",
    comment: "registry.ts imports only util and its own types",
    severity: "error",
    from: { path: "^src/tools/registry\\.ts$" },
    to: { path: "^src/", pathNot: ["^src/util/", "^src/tools/(registry|types)\\.ts$"] },
  },
  {
    name: "no-circular",
    severity: "error",
    from: {},
    to: { circular: true },
  },
);
module.exports = {
  forbidden,
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".tsx", ".js"] },
  },
};
