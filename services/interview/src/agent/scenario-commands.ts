import { AppError } from "@evalp/kit";
import type { EntryKind } from "../db/entries.js";
import { scenarioState } from "../flow/agent-state.js";
import { findScenario } from "../flow/snapshot.js";
import type { Step } from "../steps.js";
import type { Command, Handler } from "./command.js";
import { entryById, fieldProblem, inProgress, writeEntry } from "./command.js";

function scenarioOf(step: Step, scenarioId: string) {
  const found = findScenario(step.flow, scenarioId);
  if (!found) throw fieldProblem("scenario_id", scenarioId, "is not a scenario of this interview");
  return found;
}

/** A criterion a finding names: `scenario_evidence` and `scenario_gap` check it the same way. */
type Finding = { scenarioId: string; criterionId: string; sectionId: string };

function findingOf(step: Step, c: Command): Finding {
  inProgress(step);
  const scenarioId = String(c.scenario_id);
  const criterionId = String(c.criterion_id);
  const { scenario, section } = scenarioOf(step, scenarioId);
  if (!scenario.criteria.some((criterion) => criterion.id === criterionId)) {
    throw fieldProblem("criterion_id", criterionId, "is not a criterion of that scenario");
  }
  return { scenarioId, criterionId, sectionId: section.id };
}

/** Writes a finding; its criterion counts as covered from now on, whether by evidence or a gap. */
function recordFinding(
  step: Step,
  { scenarioId, criterionId, sectionId }: Finding,
  kind: Extract<EntryKind, "scenario_evidence" | "scenario_gap">,
  payload: Record<string, unknown>,
) {
  const state = scenarioState(step.interview.agent, scenarioId);
  const covered = state.covered.includes(criterionId) ? state.covered : [...state.covered, criterionId];
  step.interview.agent = {
    ...step.interview.agent,
    scenarios: { ...step.interview.agent.scenarios, [scenarioId]: { ...state, covered } },
  };
  return writeEntry(
    step,
    { kind, actor: "agent", scenarioId, sectionId, payload: { criterion_id: criterionId, ...payload } },
    true,
  );
}

/** The agent asks a scenario's follow-up, up to the scenario's `max_follow_ups`. */
export const scenarioFollowUp: Handler = async (step, c) => {
  inProgress(step);
  const { scenario, section } = scenarioOf(step, String(c.scenario_id));
  const state = scenarioState(step.interview.agent, scenario.id);
  if (state.follow_ups >= scenario.max_follow_ups) {
    throw new AppError("follow_up_limit_reached", "This scenario has no follow-ups left.", {
      scenario_id: scenario.id,
      max_follow_ups: scenario.max_follow_ups,
      follow_ups_used: state.follow_ups,
    });
  }
  const used = state.follow_ups + 1;
  step.interview.agent = {
    ...step.interview.agent,
    scenarios: { ...step.interview.agent.scenarios, [scenario.id]: { ...state, follow_ups: used } },
  };
  return writeEntry(
    step,
    {
      kind: "scenario_follow_up",
      actor: "agent",
      scenarioId: scenario.id,
      sectionId: section.id,
      attempt: used,
      payload: { speaker: "agent", text: c.text, follow_ups_used: used },
    },
    true,
  );
};

/** Entries of this interview that show a criterion met. */
export const scenarioEvidence: Handler = async (step, c) => {
  const finding = findingOf(step, c);
  const ids = c.entry_ids as string[];
  for (const id of ids) await entryById(step, id);
  return recordFinding(step, finding, "scenario_evidence", { entry_ids: ids, summary: c.summary });
};

/** A criterion the participant could not show, and why. */
export const scenarioGap: Handler = async (step, c) =>
  recordFinding(step, findingOf(step, c), "scenario_gap", { reason: c.reason });
