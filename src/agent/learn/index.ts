/**
 * `/learn <what>` and `hermes learn <what>`: from a folder, a file, a URL, this conversation or
 * pasted notes, prepare the one message that asks the agent to distil a skill through
 * `skill_manage`. Both surfaces call {@link prepareLearnTurn} and then send the prompt as a turn.
 */
import { writeApprovalEnabled } from "../../knowledge/write-approval/gate.js";
import { guardRoots } from "../../tools/approval/protected-paths.js";
import {
  classifyLearnInput,
  gatherFile,
  gatherFolder,
  gatherNotes,
  type Material,
  type MaterialLimits,
  referenceMaterial,
} from "./material.js";
import { buildLearnPrompt, describeSource } from "./prompt.js";

export { classifyLearnInput, DEFAULT_LIMITS, type LearnSource, type Material } from "./material.js";
export { buildLearnPrompt, describeSource } from "./prompt.js";

export interface LearnTurnInput {
  /** What the user typed after /learn. */
  what: string;
  cwd: string;
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  config: Readonly<Record<string, unknown>>;
  /** Messages in the conversation so far (for "this chat"). */
  conversationLength: number;
  /** The tools this session offers (to say at once when skill_manage or web_extract is missing). */
  tools: readonly string[];
  limits?: MaterialLimits;
}

export type LearnTurn =
  | { ok: true; prompt: string; material: Material; notice: string[] }
  | { ok: false; error: string };

export const LEARN_USAGE =
  'Usage: /learn <folder | file | https://URL | "this chat" | notes> — distils a reusable skill from it.';

/** Gathers the material and builds the prompt, or says why there is nothing to send. */
export function prepareLearnTurn(input: LearnTurnInput): LearnTurn {
  const what = input.what.trim();
  if (!what) return { ok: false, error: LEARN_USAGE };
  if (!input.tools.includes("skill_manage")) {
    return {
      ok: false,
      error:
        "Learning writes a skill with skill_manage, which this session does not have. Enable the skills toolset.",
    };
  }
  const source = classifyLearnInput(what, input.cwd);
  const roots = guardRoots(input.home, input.env);
  let material: Material;
  switch (source.kind) {
    case "folder":
      material = gatherFolder(source.path, roots, input.limits);
      break;
    case "file":
      material = gatherFile(source.path, roots, input.limits);
      break;
    case "notes":
      material = gatherNotes(source.text, input.limits);
      break;
    case "url":
      if (!input.tools.includes("web_extract")) {
        return {
          ok: false,
          error: `Reading ${source.url} needs the web_extract tool, which this session does not have. Enable the web toolset.`,
        };
      }
      material = referenceMaterial(source);
      break;
    case "chat":
      if (input.conversationLength === 0) {
        return { ok: false, error: "This conversation is empty so far: there is nothing to learn from yet." };
      }
      material = referenceMaterial(source);
      break;
  }
  const gathered = source.kind === "folder" || source.kind === "file" || source.kind === "notes";
  if (gathered && material.files.length === 0) {
    const why = material.skipped.length > 0 ? ` (${material.skipped.join("; ")})` : "";
    return { ok: false, error: `Nothing readable to learn from in ${describeSource(material)}${why}.` };
  }
  const approval = writeApprovalEnabled(input.config, "skills");
  const notice = [
    `Learning from ${describeSource(material)}` +
      (gathered
        ? `: ${material.files.length} file(s) read${material.skipped.length ? `, ${material.skipped.length} skipped` : ""}.`
        : "."),
    ...material.skipped.map((line) => `  skipped ${line}`),
    ...(approval ? ["skills.write_approval is on: the skill will wait for /skills approve."] : []),
  ];
  return { ok: true, prompt: buildLearnPrompt(material, { approval }), material, notice };
}
