/** The proposal the participant is asked to confirm or reject (docs/interview.md#the-agent-protocol). */
export type PendingProposal = {
  /** The proposal's id is the id of its `proposal` entry. */
  id: string;
  seq: number;
  question_id: string;
  proposed_answer: Record<string, unknown>;
  confirmation_text: string;
  created_at: string;
};

/** A scenario's progress: follow-ups used, and the criteria that have evidence or a gap. */
export type ScenarioState = { follow_ups: number; covered: string[] };

/**
 * What the agent side keeps on the interview (column `agent`): whether an agent socket is open,
 * the pending proposal, rejected proposals per question, and scenario progress.
 */
export type AgentState = {
  connected?: boolean;
  proposal?: PendingProposal | null;
  rejections?: Record<string, number>;
  scenarios?: Record<string, ScenarioState>;
};

export function scenarioState(state: AgentState, scenarioId: string): ScenarioState {
  return state.scenarios?.[scenarioId] ?? { follow_ups: 0, covered: [] };
}
