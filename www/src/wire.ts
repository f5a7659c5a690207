// Wire shapes the page reads for display (SPEC §1; docs/server-api.md). Decisions never read these
// fields: they come from the ProjectionStore. Unknown fields are tolerated everywhere.
import type { WireMessage, WireSession, WireStatusSummary, WireTaskInput, WireTurn } from 'task-projection';

export interface Task extends WireTaskInput {
  title?: string | null;
  workspace_id?: string;
  status_summary?: (WireStatusSummary & Record<string, unknown>) | null;
}

export interface Session extends WireSession {
  agent_profile_id?: string | null;
  profile?: string | null;
  state_reason?: string | null;
}

export type Turn = WireTurn;

export interface Message extends WireMessage {
  id: string;
  content?: string | null;
  text?: string | null;
  metadata?: (NonNullable<WireMessage['metadata']> & {
    question?: string | null;
    answer?: string | null;
    /** An answered row: the respond body as the server kept it (`{"answers": [...]}`). */
    response?: unknown;
    /** A resumed turn's prompt: the bundle whose answer it carries. */
    response_to?: string | null;
    [key: string]: unknown;
  }) | null;
}

/** `POST /api/v1/clarification/:pending_id/respond` body. */
export type RespondBody = { answers: { question_id: string; answer: string }[] } | { reject: true };

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
