/** The page's view of the gateway routes' answers. */

export interface PlatformStatus {
  name: string;
  state: "connected" | "failed" | "disconnected";
  error?: string;
  since: string;
}

export interface RunningTurn {
  session_key: string;
  session_id: string | null;
  platform: string;
  chat_id: string;
  started_at: string;
}

export interface ApprovalInfo {
  id: string;
  session_key: string;
  platform: string;
  chat_id: string;
  user_id: string;
  command: string;
  reason: string;
  protected_path: boolean;
  created_at: string;
  expires_at: string;
  /** The gateway instance whose turn waits on it (several instances on PostgreSQL). */
  instance?: string;
}

export type GatewayLive =
  | { running: false; conversations: number; approvals?: ApprovalInfo[] }
  | {
      running: true;
      pid: number;
      started_at: string;
      version: string;
      services: string[];
      platforms: PlatformStatus[];
      running_turns: RunningTurn[];
      approvals: ApprovalInfo[];
      conversations: number;
    };

export interface PairingList {
  pending: Array<{
    platform: string;
    requestId: string;
    userId: string;
    userName: string;
    createdAt: number;
    expiresAt: number;
  }>;
  approved: Array<{ platform: string; userId: string; userName: string; approvedAt?: number }>;
}

export interface Allowlists {
  platforms: Record<
    string,
    { allowed_users: string[]; allow_all: boolean; env_name: string; editable: boolean }
  >;
  known_platforms: string[];
}

export interface WebhookView {
  name: string;
  source: "config" | "subscription";
  url: string;
  description?: string;
  events?: string[];
  deliver?: string;
  deliver_only?: boolean;
  deliver_extra?: Record<string, unknown>;
  skills?: string[];
  prompt?: string;
  enabled?: boolean;
  created_at?: string;
  secret_set: "route" | "global" | "none";
}

export interface Webhooks {
  enabled: boolean;
  base_url: string;
  routes: WebhookView[];
}
