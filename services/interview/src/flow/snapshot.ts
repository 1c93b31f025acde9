import { create } from "@bufbuild/protobuf";
import {
  MissingItemSchema,
  OptionSchema,
  QuestionSchema,
  SectionSchema,
  type Snapshot,
  SnapshotSchema,
} from "@evalp/proto/interview/v1/interview";
import type { AnswerMap, Flow, Placed } from "./flow.js";
import { type OperatorStatus, participantStatus } from "./statuses.js";

/** The parts of an interview the participant's view is made of. */
export type SnapshotState = {
  id: string;
  status: OperatorStatus;
  consented: boolean;
  answers: AnswerMap;
  revision: number;
  pausedReason: string | null;
};

function questionMessage(placed: Placed) {
  const { question } = placed;
  return create(QuestionSchema, {
    id: question.id,
    prompt: question.prompt,
    input: question.input,
    // Contract §7b: `[]` for inputs without options.
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
  const current = running ? progress.current : null;
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
    agentConnected: false,
    attempt: current ? (state.answers[current.question.id]?.attempts ?? 0) : 0,
    interviewId: state.id,
    itemKind: current ? "question" : undefined,
    itemText: current?.question.prompt,
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
  });
}
