/** Shapes of the sessions API answers that the Sessions page's files share. */

/** A session row of `GET /api/sessions` as this page uses it. */
export interface SessionRow {
  id: string;
  source: string;
  model: string | null;
  title: string | null;
  parentSessionId: string | null;
  startedAt: number;
  endedAt: number | null;
  endReason: string | null;
  messageCount: number;
  toolCallCount: number;
  preview?: string;
  lastActiveAt?: number;
}
