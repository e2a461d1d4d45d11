/**
 * Toolset distributions for batch runs, as Python Hermes's `toolset_distributions.py` names and
 * weighs them: each toolset of a distribution is included in a prompt's run with its own chance
 * (percent), independently; a roll that picks nothing falls back to the most likely toolset.
 */

export interface ToolsetDistribution {
  description: string;
  /** Toolset name → chance of being included, in percent. */
  toolsets: Readonly<Record<string, number>>;
}

export const DISTRIBUTIONS: Readonly<Record<string, ToolsetDistribution>> = {
  default: {
    description: "All available tools, all the time",
    toolsets: { web: 100, vision: 100, image_gen: 100, terminal: 100, file: 100, moa: 100, browser: 100 },
  },
  image_gen: {
    description: "Heavy focus on image generation with vision and web support",
    toolsets: { image_gen: 90, vision: 90, web: 55, terminal: 45, moa: 10 },
  },
  research: {
    description: "Web research with vision analysis and reasoning",
    toolsets: { web: 90, browser: 70, vision: 50, moa: 40, terminal: 10 },
  },
  science: {
    description: "Scientific research with web, terminal, file, and browser capabilities",
    toolsets: { web: 94, terminal: 94, file: 94, vision: 65, browser: 50, image_gen: 15, moa: 10 },
  },
  development: {
    description: "Terminal, file tools, and reasoning with occasional web lookup",
    toolsets: { terminal: 80, file: 80, moa: 60, web: 30, vision: 10 },
  },
  safe: {
    description: "All tools except terminal for safety",
    toolsets: { web: 80, browser: 70, vision: 60, image_gen: 60, moa: 50 },
  },
  balanced: {
    description: "Equal probability of all toolsets",
    toolsets: { web: 50, vision: 50, image_gen: 50, terminal: 50, file: 50, moa: 50, browser: 50 },
  },
  minimal: { description: "Only web tools for basic research", toolsets: { web: 100 } },
  terminal_only: {
    description: "Terminal and file tools for code execution tasks",
    toolsets: { terminal: 100, file: 100 },
  },
  terminal_web: {
    description: "Terminal and file tools with web search for documentation lookup",
    toolsets: { terminal: 100, file: 100, web: 100 },
  },
  creative: {
    description: "Image generation and vision analysis focus",
    toolsets: { image_gen: 90, vision: 90, web: 30 },
  },
  reasoning: {
    description: "Heavy mixture of agents usage with minimal other tools",
    toolsets: { moa: 90, web: 30, terminal: 20 },
  },
  browser_use: {
    description: "Full browser-based web interaction with search, vision, and page control",
    toolsets: { browser: 100, web: 80, vision: 70 },
  },
  browser_only: {
    description: "Only browser automation tools for pure web interaction tasks",
    toolsets: { browser: 100 },
  },
  browser_tasks: {
    description: "Browser-focused distribution (browser toolset includes web_search for finding URLs)",
    toolsets: { browser: 97, vision: 12, terminal: 15 },
  },
  terminal_tasks: {
    description: "Terminal-focused distribution with high terminal/file availability, occasional other tools",
    toolsets: { terminal: 97, file: 97, web: 97, browser: 75, vision: 50, image_gen: 10 },
  },
  mixed_tasks: {
    description: "Mixed distribution with high browser, terminal, and file availability for complex tasks",
    toolsets: { browser: 92, terminal: 92, file: 92, web: 35, vision: 15, image_gen: 15 },
  },
};

/** The distribution called `name`, or an error naming the ones that exist. */
export function distributionNamed(name: string): ToolsetDistribution {
  const found = Object.hasOwn(DISTRIBUTIONS, name) ? DISTRIBUTIONS[name] : undefined;
  if (!found) {
    throw new Error(
      `unknown toolset distribution "${name}"; choose one of: ${Object.keys(DISTRIBUTIONS).join(", ")} (hermes batch distributions lists them).`,
    );
  }
  return found;
}

/**
 * Rolls the toolsets for one prompt. `random` returns [0, 1) (Math.random in use, a seeded one in
 * tests); `known` says whether a toolset exists here (one that does not is skipped and reported in
 * `skipped`, never sent to the agent). Never empty while the distribution names a known toolset.
 */
export function sampleToolsets(
  distribution: ToolsetDistribution,
  random: () => number,
  known: (toolset: string) => boolean,
): { toolsets: string[]; skipped: string[] } {
  const toolsets: string[] = [];
  const skipped: string[] = [];
  for (const [name, chance] of Object.entries(distribution.toolsets)) {
    if (!known(name)) {
      skipped.push(name);
      continue;
    }
    if (random() * 100 < chance) toolsets.push(name);
  }
  if (toolsets.length === 0) {
    const best = Object.entries(distribution.toolsets)
      .filter(([name]) => known(name))
      .sort((a, b) => b[1] - a[1])[0];
    if (best) toolsets.push(best[0]);
  }
  return { toolsets, skipped };
}
