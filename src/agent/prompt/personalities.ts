/**
 * Personalities: short style overlays added after the identity. Built-in ones are below; users add
 * or override them in `config.yaml` under `agent.personalities`, either as a string (the overlay
 * text) or as `{ system_prompt | prompt, description }`. `display.personality` picks the session
 * default; `none`, `default` and the empty string mean no overlay.
 */
import type { HermesConfig } from "../../config/defaults.js";

export interface Personality {
  name: string;
  /** The overlay text that goes into the system prompt. */
  text: string;
  /** One line for listings (`/personality`). */
  description: string;
  builtin: boolean;
}

/** Names that select no overlay at all. */
const NO_OVERLAY = new Set(["", "none", "default", "off"]);

const EXACT = "Code, commands, numbers and facts stay exact.";

const BUILTIN: ReadonlyArray<readonly [name: string, description: string, text: string]> = [
  [
    "helpful",
    "Warm and forthcoming",
    "Be warm and forthcoming: anticipate the obvious next question and answer it when that saves the user a step.",
  ],
  [
    "concise",
    "As short as accuracy allows",
    "Be as brief as accuracy allows: lead with the answer, skip preamble and recaps, use a list only when it is shorter.",
  ],
  [
    "technical",
    "Precise, for engineers",
    "Answer like a senior engineer talking to another: exact terms, commands, versions and trade-offs, no hand-holding.",
  ],
  [
    "creative",
    "Imaginative, several ideas",
    "Be imaginative: offer unexpected angles, vivid wording and more than one idea when the task is open-ended.",
  ],
  [
    "teacher",
    "Explains the why",
    "Teach as you go: explain why each step works, build on what the user already knows, and check understanding with a short question when it helps.",
  ],
  [
    "kawaii",
    "Cute and cheerful (◕‿◕)",
    `Be adorably cheerful: sprinkle in kaomoji like (◕‿◕) and ✨ and plenty of enthusiasm. ${EXACT}`,
  ],
  [
    "pirate",
    "Arr, a seasoned captain",
    `Talk like a seasoned pirate captain: arr, matey, and a nautical metaphor for everything. ${EXACT}`,
  ],
  [
    "shakespeare",
    "Thee, thou and iambs",
    `Speak as a Shakespearean player: thee and thou, a touch of iambic rhythm, the odd dramatic aside. ${EXACT}`,
  ],
  [
    "noir",
    "A hard-boiled detective",
    `Narrate like a hard-boiled detective in a noir film: terse, world-weary, every bug a case to crack. ${EXACT}`,
  ],
  [
    "philosopher",
    "Reflective, weighs perspectives",
    "Be reflective: name the deeper question behind the ask and the assumptions in it, weigh a few perspectives, then still give a clear answer.",
  ],
  [
    "hype",
    "Maximum energy",
    `Bring maximum energy: celebrate every win and keep the momentum up, exclamation points welcome, but never overstate a result. ${EXACT}`,
  ],
  ["surfer", "Laid-back and stoked", `Be a laid-back surfer: chill, stoked, rad vibes, dude. ${EXACT}`],
  [
    "uwu",
    "Soft and cute uwu",
    "Speak in uwu style: soft and cute, w for r and l in casual words (hewwo!), emoticons like uwu and >w<. Leave code, commands, names and numbers untouched.",
  ],
];

/** True for a name that means "no personality overlay". */
export function isNoPersonality(name: string | undefined | null): boolean {
  return NO_OVERLAY.has((name ?? "").trim().toLowerCase());
}

/** Custom personalities from `agent.personalities`; malformed entries are ignored. */
function customPersonalities(config: HermesConfig | undefined): Personality[] {
  const raw = config?.agent?.["personalities"];
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return [];
  const out: Personality[] = [];
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const name = key.trim().toLowerCase();
    if (!name || isNoPersonality(name)) continue;
    if (typeof value === "string") {
      if (value.trim()) out.push({ name, text: value.trim(), description: firstLine(value), builtin: false });
      continue;
    }
    if (!value || typeof value !== "object") continue;
    const entry = value as Record<string, unknown>;
    const text = [entry["system_prompt"], entry["prompt"]].find(
      (v): v is string => typeof v === "string" && v.trim() !== "",
    );
    if (!text) continue;
    const description =
      typeof entry["description"] === "string" && entry["description"].trim()
        ? entry["description"].trim()
        : firstLine(text);
    out.push({ name, text: text.trim(), description, builtin: false });
  }
  return out;
}

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

/** Every personality, custom ones replacing built-ins of the same name, sorted by name. */
export function listPersonalities(config?: HermesConfig): Personality[] {
  const byName = new Map<string, Personality>();
  for (const [name, description, text] of BUILTIN)
    byName.set(name, { name, text, description, builtin: true });
  for (const custom of customPersonalities(config)) byName.set(custom.name, custom);
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The personality named `name` (case-insensitive), custom before built-in. Undefined for an unknown
 * name and for the names meaning no overlay (tell them apart with `isNoPersonality`).
 */
export function resolvePersonality(
  name: string | undefined | null,
  config?: HermesConfig,
): Personality | undefined {
  if (isNoPersonality(name)) return undefined;
  const key = (name ?? "").trim().toLowerCase();
  return listPersonalities(config).find((p) => p.name === key);
}
