export type AgentStep =
  | { send: Record<string, unknown>; expect?: string }
  | { await: "proposal_resolved" }
  | { await: string; value: unknown };

/** An answer frame (`ack` or `error`) or a `state` push, as docs/interview.md#the-agent-protocol shapes them. */
export type Frame = {
  type: string;
  id?: string;
  code?: string;
  message?: string;
  context?: { detail?: { loc: string[] }[] } & Record<string, unknown>;
  entry?: Record<string, unknown>;
  interview?: Record<string, unknown>;
};

export type AgentAnswer = { command: Record<string, unknown> & { id: string; type: string }; frame: Frame };

export function runAgent(options: {
  url: string;
  token: string;
  steps: AgentStep[];
  prefix?: string;
  timeoutMs?: number;
  onFrame?: (frame: Frame) => void;
}): Promise<{ answers: AgentAnswer[]; interview: Record<string, unknown> | undefined }>;
