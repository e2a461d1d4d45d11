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
}
