/**
 * Batch datasets: JSONL, one prompt per line, `{"prompt", "cwd"?, "image"?|"docker_image"?, ...}`
 * as Python Hermes's batch runner reads them. Blank lines are skipped; a line that is not JSON or
 * has no string `prompt` is reported and skipped, never fatal, and keeps its place in the count so
 * `prompt_index` stays the line's position among the valid rows, as upstream numbers them.
 */

export interface DatasetRow {
  /** Position among the valid rows, from 0: the run's key for this prompt. */
  index: number;
  prompt: string;
  /** The working directory to run in (must exist); default: a fresh one under the run. */
  cwd?: string;
  /** Container image to run this prompt's tools in (docker backend). */
  image?: string;
  /** The whole row, for fields the runner does not read. */
  raw: Record<string, unknown>;
}

export interface ParsedDataset {
  rows: DatasetRow[];
  /** One line per skipped line: `line N: why`. */
  warnings: string[];
}

/** Parses a dataset's text. Pure. */
export function parseDataset(text: string): ParsedDataset {
  const rows: DatasetRow[] = [];
  const warnings: string[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      warnings.push(
        `line ${i + 1}: not JSON (${error instanceof Error ? error.message : String(error)}); skipped`,
      );
      continue;
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      warnings.push(`line ${i + 1}: expected a JSON object with a "prompt"; skipped`);
      continue;
    }
    const raw = value as Record<string, unknown>;
    const prompt = raw["prompt"];
    if (typeof prompt !== "string" || !prompt.trim()) {
      warnings.push(`line ${i + 1}: missing "prompt" (a non-empty string); skipped`);
      continue;
    }
    const image = str(raw["image"]) ?? str(raw["docker_image"]);
    const cwd = str(raw["cwd"]);
    rows.push({ index: rows.length, prompt, ...(cwd ? { cwd } : {}), ...(image ? { image } : {}), raw });
  }
  return { rows, warnings };
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}
