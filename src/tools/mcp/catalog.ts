/**
 * A small built-in catalog of well-known MCP servers for `hermes mcp install NAME` (and
 * `hermes mcp add NAME --preset ID`): what to run, which arguments to ask for, which environment
 * variables the server needs. Pure data and a pure builder: the command asks and writes.
 *
 * Secrets never land in config.yaml: an entry's secret variables are written as `${VAR}` and their
 * values go to `.env`.
 */

export interface CatalogParam {
  /** Shown when asking, and in `hermes mcp catalog`. */
  prompt: string;
  /** Used when nothing is given; `{cwd}` is the current directory. */
  fallback?: string;
}

export interface CatalogVariable {
  name: string;
  prompt: string;
  /** Kept in `.env` and referenced as `${NAME}` (tokens, keys). */
  secret: boolean;
  /** The server works without it. */
  optional?: boolean;
}

export interface CatalogEntry {
  id: string;
  description: string;
  /** A stdio server: the program and its arguments; `{0}`, `{1}`… are the params' values. */
  command: string;
  args: string[];
  params?: CatalogParam[];
  env?: CatalogVariable[];
  /** What must be installed for the command to run (shown, never installed for the user). */
  requires: string;
}

export const MCP_CATALOG: readonly CatalogEntry[] = [
  {
    id: "filesystem",
    description: "Read, write and search files under one directory",
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-filesystem", "{0}"],
    params: [{ prompt: "Directory the server may use", fallback: "{cwd}" }],
    requires: "Node.js (npx)",
  },
  {
    id: "everything",
    description: "The MCP reference server: every feature of the protocol, for trying clients out",
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-everything"],
    requires: "Node.js (npx)",
  },
  {
    id: "fetch",
    description: "Fetch a web page and turn it into markdown",
    command: "uvx",
    args: ["mcp-server-fetch"],
    requires: "uv (uvx)",
  },
  {
    id: "github",
    description: "GitHub repositories, issues and pull requests",
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-github"],
    env: [{ name: "GITHUB_PERSONAL_ACCESS_TOKEN", prompt: "GitHub personal access token", secret: true }],
    requires: "Node.js (npx)",
  },
  {
    id: "git",
    description: "Read and work with one git repository",
    command: "uvx",
    args: ["mcp-server-git", "--repository", "{0}"],
    params: [{ prompt: "Repository path", fallback: "{cwd}" }],
    requires: "uv (uvx)",
  },
  {
    id: "memory",
    description: "A knowledge graph the model keeps between sessions",
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-memory"],
    requires: "Node.js (npx)",
  },
  {
    id: "sequential-thinking",
    description: "Step-by-step thinking as a tool",
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-sequential-thinking"],
    requires: "Node.js (npx)",
  },
  {
    id: "time",
    description: "Current time and time-zone conversion",
    command: "uvx",
    args: ["mcp-server-time"],
    requires: "uv (uvx)",
  },
  {
    id: "playwright",
    description: "Drive a headless browser (Microsoft's Playwright MCP)",
    command: "npx",
    args: ["-y", "@playwright/mcp@latest", "--headless"],
    requires: "Node.js (npx); downloads a browser on first use",
  },
  {
    id: "brave-search",
    description: "Web search through the Brave Search API",
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-brave-search"],
    env: [{ name: "BRAVE_API_KEY", prompt: "Brave Search API key", secret: true }],
    requires: "Node.js (npx)",
  },
  {
    id: "codex",
    description: "OpenAI's Codex CLI as an MCP server (upstream's codex preset)",
    command: "codex",
    args: ["mcp-server"],
    requires: "the codex CLI on PATH",
  },
];

/** The entry named `id` (case-insensitive), or undefined. */
export function findCatalogEntry(id: string): CatalogEntry | undefined {
  const wanted = id.trim().toLowerCase();
  return MCP_CATALOG.find((entry) => entry.id === wanted);
}

export interface CatalogAnswers {
  /** One value per param, in order; missing ones take their fallback. */
  params: readonly (string | undefined)[];
  /** The current directory, for `{cwd}` fallbacks. */
  cwd: string;
}

/**
 * The `mcp_servers` entry for a catalog server. Secret and plain variables alike are written as
 * `${NAME}` references; the caller stores the values in `.env`. Throws when a param has no value.
 */
export function catalogServerEntry(entry: CatalogEntry, answers: CatalogAnswers): Record<string, unknown> {
  const values = (entry.params ?? []).map((param, i) => {
    const given = answers.params[i]?.trim();
    const value = given || param.fallback?.replace("{cwd}", answers.cwd);
    if (!value) throw new Error(`${entry.id} needs a value for "${param.prompt}"`);
    return value;
  });
  const args = entry.args.map((arg) => arg.replace(/\{(\d+)\}/g, (_m, i: string) => values[Number(i)] ?? ""));
  const out: Record<string, unknown> = { command: entry.command, args };
  if (entry.env?.length) {
    out["env"] = Object.fromEntries(entry.env.map((v) => [v.name, `\${${v.name}}`]));
  }
  return out;
}
