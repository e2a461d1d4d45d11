/** Options shared by `hermes` and `hermes chat`. */
export interface ChatFlags {
  query?: string;
  oneshot?: string;
  model?: string;
  provider?: string;
  baseUrl?: string;
  toolsets?: string;
  maxTurns?: number;
  yolo?: boolean;
  quiet?: boolean;
  verbose?: boolean;
  listTools?: boolean;
  listToolsets?: boolean;
  profile?: string;
  /** `-r ID|TITLE`: resume that session. */
  resume?: string;
  /** `-c [TITLE]`: continue the latest session (of that title's lineage). */
  continue?: boolean | string;
  /** `--ignore-rules`: no SOUL.md, project context file or memory snapshot. */
  ignoreRules?: boolean;
  /** `--personality NAME`: overlay for this session. */
  personality?: string;
}
