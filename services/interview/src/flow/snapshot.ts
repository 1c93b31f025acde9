import { create, type JsonObject } from "@bufbuild/protobuf";
import type { Experience } from "@evalp/components";
import {
  MissingItemSchema,
  OptionSchema,
  QuestionSchema,
  SectionSchema,
  type Snapshot,
  SnapshotSchema,
} from "@evalp/proto/interview/v1/interview";
import { type AgentState, scenarioState } from "./agent-state.js";
import type { AnswerMap, Flow, Placed, Progress } from "./flow.js";
import { type OperatorStatus, participantStatus } from "./statuses.js";

/** The parts of an interview the participant's view is made of. */
export type SnapshotState = {
  id: string;
  status: OperatorStatus;
  consented: boolean;
  answers: AnswerMap;
  revision: number;
  pausedReason: string | null;
  /** The agent side (docs/interview.md#the-agent-protocol); absent: no agent ever acted. */
  agent?: AgentState;
};

type Scenario = NonNullable<Experience["sections"][number]["scenarios"]>[number];

/**
 * A scenario is done once every criterion has evidence or a gap (one without criteria once its
 * follow-ups are used up).
 */
export function scenarioDone(scenario: Scenario, agent: AgentState): boolean {
  const state = scenarioState(agent, scenario.id);
  if (scenario.criteria.length === 0) return state.follow_ups >= scenario.max_follow_ups;
  return scenario.criteria.every((criterion) => state.covered.includes(criterion.id));
}

/** Every scenario of the experience, by id, with its section. */
export function findScenario(flow: Flow, scenarioId: string) {
  for (const section of flow.components.experience.sections) {
    const scenario = (section.scenarios ?? []).find((candidate) => candidate.id === scenarioId);
    if (scenario) return { scenario, section };
  }
  return null;
}

/**
 * The current scenario (docs/interview.md#the-agent-protocol): walking the sections in order, the first scenario not done
 * of a section whose applicable questions are all answered, before any section with an open one.
 */
export function currentScenario(flow: Flow, progress: Progress, answers: AnswerMap, agent: AgentState) {
  const sections = flow.components.experience.sections;
  for (let index = 0; index < sections.length; index++) {
    const section = sections[index];
    if (!section) continue;
    const open = progress.applicable.some(
      (placed) => placed.sectionIndex === index && !Object.hasOwn(answers, placed.question.id),
    );
    if (open) return null;
    const scenario = (section.scenarios ?? []).find((candidate) => !scenarioDone(candidate, agent));
    if (scenario) return scenario;
  }
  return null;
}

/** A question as the participant's view shows it, in JSON (for the pending proposal). */
export function questionJson(placed: Placed) {
  const { question } = placed;
  return {
    id: question.id,
    prompt: question.prompt,
    input: question.input,
    options: (question.options ?? []).map((option) => ({ id: option.id, label: option.label })),
    required: question.required === true,
    ...(question.min === undefined ? {} : { min: question.min }),
    ...(question.max === undefined ? {} : { max: question.max }),
  };
}

function questionMessage(placed: Placed) {
  const { question } = placed;
  return create(QuestionSchema, {
    id: question.id,
    prompt: question.prompt,
    input: question.input,
    // docs/expressions.md#component-contents: `[]` for inputs without options.
    options: (question.options ?? []).map((option) => create(OptionSchema, option)),
    required: question.required === true,
    min: question.min,
    max: question.max,
  });
}

/**
 * The participant's view (the start result's `interview`, and the body of every step). The
 * current question and its section show while the interview is in progress (or paused);
 * `ready_to_finish` once every applicable required question has an answer.
 */
export function snapshotOf(flow: Flow, state: SnapshotState): Snapshot {
  const status = participantStatus(state.status, state.consented);
  const experience = flow.components.experience;
  const progress = flow.progress(state.answers);
  const running = status === "in_progress" || status === "paused";
  const agent = state.agent ?? {};
  const scenario = running ? currentScenario(flow, progress, state.answers, agent) : null;
  const current = running && !scenario ? progress.current : null;
  const proposal = running ? (agent.proposal ?? null) : null;
  const proposed = proposal ? flow.find(proposal.question_id) : undefined;
  const previous = proposal ? state.answers[proposal.question_id] : undefined;
  const used = scenario ? scenarioState(agent, scenario.id).follow_ups : 0;
  const over = status === "completed" || status === "ended";
  const sections = experience.sections;
  const sectionOf = (placed: Placed) => {
    const inSection = progress.applicable.filter((other) => other.sectionIndex === placed.sectionIndex);
    return create(SectionSchema, {
      id: placed.section.id,
      title: placed.section.title,
      position: placed.sectionIndex + 1,
      total: sections.length,
      count: inSection.length,
      answered: inSection.filter((other) => Object.hasOwn(state.answers, other.question.id)).length,
      description: placed.section.description,
    });
  };
  return create(SnapshotSchema, {
    available: !over,
    consented: state.consented,
    status,
    agentConnected: agent.connected === true,
    attempt: current
      ? (state.answers[current.question.id]?.attempts ?? 0) + (agent.rejections?.[current.question.id] ?? 0)
      : 0,
    interviewId: state.id,
    itemKind: scenario ? "scenario" : current ? "question" : undefined,
    itemText: scenario ? scenario.prompt : current?.question.prompt,
    missing: progress.missing.map((placed) =>
      create(MissingItemSchema, {
        id: placed.question.id,
        kind: "question",
        label: placed.question.prompt,
        sectionId: placed.section.id,
      }),
    ),
    pausedReason: state.pausedReason ?? undefined,
    progress: progress.progress,
    question: current ? questionMessage(current) : undefined,
    readyToFinish: status === "in_progress" && progress.missing.length === 0,
    revision: state.revision,
    section: current ? sectionOf(current) : undefined,
    targetMinutesMin: experience.target_minutes_min,
    targetMinutesMax: experience.target_minutes_max,
    unavailableReason: over ? status : undefined,
    pendingProposal:
      proposal && proposed
        ? ({
            id: proposal.id,
            kind: "answer",
            confirmation_text: proposal.confirmation_text,
            created_at: proposal.created_at,
            question: questionJson(proposed),
            proposed_answer: proposal.proposed_answer,
            ...(previous ? { previous_answer: previous.answer } : {}),
          } as JsonObject)
        : undefined,
    scenario: scenario
      ? {
          id: scenario.id,
          prompt: scenario.prompt,
          framing: scenario.framing,
          follow_ups_used: used,
          follow_ups_remaining: Math.max(scenario.max_follow_ups - used, 0),
          max_follow_ups: scenario.max_follow_ups,
          criteria: scenario.criteria.map((criterion) => ({ id: criterion.id, label: criterion.label })),
        }
      : undefined,
  });
}
