import type { AdaptivePolicy, ContextContent, Experience, Guardrail, Question } from "@evalp/components";
import { type CompiledExpression, compileExpression, evaluate } from "@evalp/expr";

/** The four components an interview runs on (docs/expressions.md#component-contents), kept on the interview when it starts. */
export type Components = {
  experience: Experience;
  adaptive_policy: AdaptivePolicy;
  guardrail: Guardrail;
  context: ContextContent;
};

/** A question's current answer, with the entry that recorded it and how many attempts it took. */
export type AnswerState = { answer: Record<string, unknown>; entry_id: string; attempts: number };
export type AnswerMap = Record<string, AnswerState>;

type Section = Experience["sections"][number];

/** A question and where it stands in the experience. */
export type Placed = { question: Question; section: Section; sectionIndex: number };

/** What the guardrail says after an answer: rules that flag, and the first that ends (if any). */
export type GuardrailOutcome = { flags: string[]; end: string | null };

/** Where an interview stands, derived from its components and answers alone. */
export type Progress = {
  /** Questions the adaptive policy does not skip, in experience order. */
  applicable: Placed[];
  skipped: Set<string>;
  /** The first applicable question without an answer: what is asked now. */
  current: Placed | null;
  /** Applicable required questions without an answer. */
  missing: Placed[];
  answered: number;
  /** Answered applicable questions ÷ applicable questions; 1 when nothing is to be asked. */
  progress: number;
};

/**
 * An experience with its adaptive policy and guardrail compiled once. `skip.when` and
 * `rules.when` see `{answers, context, signals}`: answers by question id in the contract's answer
 * forms (`answers.q2.option_id`), the context's variable defaults, no signals.
 */
export class Flow {
  readonly questions: Placed[];
  private readonly byId: Map<string, Placed>;
  private readonly skips: { questionId: string; when: CompiledExpression }[];
  private readonly rules: { id: string; action: "flag" | "end"; when: CompiledExpression }[];
  private readonly context: Record<string, unknown>;

  constructor(readonly components: Components) {
    this.questions = components.experience.sections.flatMap((section, sectionIndex) =>
      section.questions.map((question) => ({ question, section, sectionIndex })),
    );
    this.byId = new Map(this.questions.map((placed) => [placed.question.id, placed]));
    this.skips = (components.adaptive_policy.skip ?? []).map((rule) => ({
      questionId: rule.question_id,
      when: compileExpression(rule.when),
    }));
    this.rules = (components.guardrail.rules ?? []).map((rule) => ({
      id: rule.id,
      action: rule.action,
      when: compileExpression(rule.when),
    }));
    this.context = { ...(components.context.variables ?? {}) };
  }

  find(questionId: string): Placed | undefined {
    return this.byId.get(questionId);
  }

  private scope(answers: AnswerMap) {
    const values = Object.fromEntries(Object.entries(answers).map(([id, state]) => [id, state.answer]));
    return { answers: values, context: this.context, signals: {} };
  }

  /** Questions skipped now: a rule's `when` is true (null or false: asked). */
  skipped(answers: AnswerMap): Set<string> {
    const scope = this.scope(answers);
    const skipped = new Set<string>();
    for (const rule of this.skips) {
      if (evaluate(rule.when, scope).value === true) skipped.add(rule.questionId);
    }
    return skipped;
  }

  /** The guardrail after an answer: every true `flag` rule, and the first true `end` rule. */
  guardrail(answers: AnswerMap): GuardrailOutcome {
    const scope = this.scope(answers);
    const flags: string[] = [];
    for (const rule of this.rules) {
      if (evaluate(rule.when, scope).value !== true) continue;
      if (rule.action === "end") return { flags, end: rule.id };
      flags.push(rule.id);
    }
    return { flags, end: null };
  }

  progress(answers: AnswerMap): Progress {
    const skipped = this.skipped(answers);
    const applicable = this.questions.filter((placed) => !skipped.has(placed.question.id));
    const open = applicable.filter((placed) => !Object.hasOwn(answers, placed.question.id));
    const answered = applicable.length - open.length;
    return {
      applicable,
      skipped,
      current: open[0] ?? null,
      missing: open.filter((placed) => placed.question.required === true),
      answered,
      progress: applicable.length === 0 ? 1 : answered / applicable.length,
    };
  }
}

/** Compiled flows by the bundle fingerprint that names their contents; bounded. */
const FLOWS = new Map<string, Flow>();
const FLOW_LIMIT = 500;

/** The flow of an interview's components, compiled once per bundle fingerprint. */
export function flowOf(fingerprint: string, components: Components): Flow {
  let flow = FLOWS.get(fingerprint);
  if (!flow) {
    flow = new Flow(components);
    if (FLOWS.size >= FLOW_LIMIT) FLOWS.clear();
    FLOWS.set(fingerprint, flow);
  }
  return flow;
}
