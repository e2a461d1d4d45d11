/** Shapes shared by the two search back ends (ripgrep and the built-in walker). */

export type SearchMode = "content" | "files_only" | "count";

export interface ContentQuery {
  /** Absolute directory or file to search. */
  root: string;
  pattern: string;
  fileGlob?: string;
  /** Lines of context around each match (content mode only). */
  context: number;
  mode: SearchMode;
  /**
   * Stop once this many results are known: matches in content mode, files otherwise. Callers ask
   * for one more than they show, to learn whether another page exists.
   */
  want: number;
  signal: AbortSignal;
}

export interface HitLine {
  /** 1-based line number. */
  line: number;
  text: string;
  /** True for a matching line, false for a context line. */
  match: boolean;
}

export interface FileHits {
  /** Absolute path. */
  path: string;
  /** Matching lines plus context lines (content mode), in line order; empty in the other modes. */
  lines: HitLine[];
  /** Matching lines in the file (all of them in count mode; up to the stop point otherwise). */
  matches: number;
}

/** Paths the walker and ripgrep both leave out, whatever the ignore files say. */
export const ALWAYS_SKIPPED_DIRS = [".git", "node_modules"] as const;
