import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { createBuiltinRegistry } from "../../../src/tools/builtin.js";

// Every model request pays for the schema of each offered tool, so the built-in schemas have a token
// budget (o200k tokens of the JSON function schema). Set SHOW_SCHEMA_TOKENS=1 to print a table.
const TOTAL_BUDGET = 6_500;
const BUDGETS: Record<string, number> = {
  // pty, notify_on_complete and watch_patterns (upstream's parameters) cost about 60 tokens.
  terminal: 380,
  process: 260,
  read_file: 224,
  write_file: 149,
  patch: 270,
  search_files: 280,
  skills_list: 180,
  skill_view: 169,
  skill_manage: 330,
  todo: 170,
  memory: 307,
  session_search: 380,
  clarify: 130,
  execute_code: 255,
  // acp_command/acp_args (an external ACP agent as the child, once per call) cost about 35 tokens.
  delegate_task: 275,
  // script, no_agent and context_from (upstream's cron script parameters) cost about 80 tokens.
  cronjob: 330,
  web_search: 145,
  web_extract: 235,
  browser_navigate: 150,
  browser_snapshot: 125,
  browser_click: 108,
  browser_type: 150,
  browser_press: 110,
  browser_scroll: 110,
  browser_back: 58,
  browser_get_images: 74,
  browser_console: 136,
  browser_vision: 138,
  browser_close: 72,
  vision_analyze: 176,
  image_generate: 198,
  text_to_speech: 175,
  ha_list_entities: 110,
  ha_get_state: 88,
  ha_list_services: 82,
  ha_call_service: 220,
  // Opt-in (toolset moa), so it costs nothing in a default session.
  mixture_of_agents: 180,
};

describe("built-in tool schema token budget", () => {
  const registry = createBuiltinRegistry();
  const counts = new Map<string, number>();
  for (const schema of registry.schemas(registry.names())) {
    counts.set(schema.function.name, countTokens(JSON.stringify(schema)));
  }
  const total = [...counts.values()].reduce((sum, n) => sum + n, 0);

  if (process.env.SHOW_SCHEMA_TOKENS) {
    const rows = [...counts].map(([name, n]) => `${name.padEnd(16)}${String(n).padStart(6)}`);
    console.log([...rows, `${"total".padEnd(16)}${String(total).padStart(6)}`].join("\n"));
  }

  it("has a budget for every built-in tool", () => {
    expect([...counts.keys()].sort()).toEqual(Object.keys(BUDGETS).sort());
  });

  it.each(Object.entries(BUDGETS))("%s stays within %i tokens", (name, budget) => {
    expect(counts.get(name)).toBeLessThanOrEqual(budget);
  });

  it(`stays within ${TOTAL_BUDGET} tokens in total`, () => {
    expect(total).toBeLessThanOrEqual(TOTAL_BUDGET);
  });
});
