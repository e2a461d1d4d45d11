/**
 * `hermes profile describe NAME --auto`: a one-line description written by the profile's own
 * auxiliary model (the title-generation route: `auxiliary.title_generation`, else the main model)
 * from what the profile is: its name, model, SOUL.md and skill names. Never its `.env`, auth.json,
 * memories or sessions. Stored in `profile.yaml` with `description_auto: true` (upstream's flag for
 * a description the user has not confirmed); `--text` replaces it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { auxiliaryComplete, resolveAuxiliaryChain } from "../../ai/auxiliary.js";
import { resolveRuntime } from "../../ai/resolve.js";
import type { Message } from "../../ai/types.js";
import { loadEnvFile } from "../../config/env-file.js";
import { loadConfig } from "../../config/load.js";
import { MAX_DESCRIPTION_CHARS, setProfileDescription } from "../../config/profile-meta.js";

/** The most of SOUL.md the model is shown (the identity is at its head). */
const SOUL_CHARS = 3000;
const MAX_SKILLS = 40;

/** Writes and stores a description for the profile at `dir`; returns it. Throws on a failed model call. */
export async function autoDescribe(
  name: string,
  dir: string,
  baseEnv: Record<string, string | undefined>,
): Promise<string> {
  const { env } = loadEnvFile(dir, baseEnv);
  const { config } = loadConfig({ home: dir, env });
  const main = resolveRuntime({ flags: {}, config, env, home: dir });
  const chain = resolveAuxiliaryChain("title_generation", { config, env, main, home: dir });
  const { text } = await auxiliaryComplete(chain, describePrompt(name, main.model, dir), { maxTokens: 120 });
  return setProfileDescription(dir, fitDescription(text), { auto: true });
}

/** The request: what the profile is, and how to answer (one or two sentences, nothing else). */
export function describePrompt(name: string, model: string, dir: string): Message[] {
  const soul = readText(join(dir, "SOUL.md")).slice(0, SOUL_CHARS).trim();
  const skills = skillNames(join(dir, "skills")).slice(0, MAX_SKILLS);
  const facts = [
    `Profile name: ${name}`,
    `Model: ${model}`,
    `Skills: ${skills.length > 0 ? skills.join(", ") : "(none)"}`,
    `SOUL.md (its identity):\n${soul || "(none)"}`,
  ].join("\n");
  return [
    {
      role: "system",
      content:
        "You describe Hermes agent profiles. Given what a profile contains, write one or two plain sentences saying what it is for, so its owner can tell it apart from other profiles. No preamble, no quotes, no markdown; at most 300 characters.",
    },
    { role: "user", content: facts },
  ];
}

/** The model's answer as one line within the stored limit, cut at a word, quotes and labels dropped. */
export function fitDescription(answer: string): string {
  let line = answer
    .replace(/[\u0000-\u001f\u007f\s]+/g, " ")
    .trim()
    .replace(/^(description|profile description)\s*:\s*/i, "")
    .replace(/^["'`*]+|["'`*]+$/g, "")
    .trim();
  if (line.length > MAX_DESCRIPTION_CHARS) {
    const cut = line.slice(0, MAX_DESCRIPTION_CHARS - 1);
    line = `${cut.slice(0, Math.max(cut.lastIndexOf(" "), MAX_DESCRIPTION_CHARS / 2)).trimEnd()}…`;
  }
  if (line === "") throw new Error("the model gave no description");
  return line;
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** Skill directory names (those holding a SKILL.md), sorted. */
function skillNames(root: string): string[] {
  try {
    return readdirSync(root, { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name === "SKILL.md" && !e.parentPath.includes("/."))
      .map((e) => e.parentPath.split("/").pop() ?? "")
      .filter(Boolean)
      .sort();
  } catch {
    return [];
  }
}
