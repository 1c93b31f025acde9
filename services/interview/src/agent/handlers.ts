import type { Handler } from "./command.js";
import { clarify, consistencyFollowUp, report, utterance } from "./conversation-commands.js";
import { propose, resolve } from "./proposal-commands.js";
import { scenarioEvidence, scenarioFollowUp, scenarioGap } from "./scenario-commands.js";
import { pause, resume } from "./status-commands.js";

/** Every command of the table in docs/interview.md#commands. */
export const HANDLERS: Record<string, Handler> = {
  utterance,
  propose,
  resolve,
  clarify,
  consistency_follow_up: consistencyFollowUp,
  scenario_follow_up: scenarioFollowUp,
  scenario_evidence: scenarioEvidence,
  scenario_gap: scenarioGap,
  report,
  pause,
  resume,
};
