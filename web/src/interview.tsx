import { type components, EvalpApiError, type EvalpClient, unwrap } from "@evalp/client";
import { type FormEvent, useCallback, useEffect, useId, useMemo, useRef, useState } from "react";
import { api, errorWords } from "./api.js";
import { useFocusOnShow } from "./focus.js";
import { type Connection, type TranscriptEntry, useAgentTurns } from "./interview-realtime.js";

type Snapshot = components["schemas"]["ParticipantInterview"];
type Question = components["schemas"]["Question"];
type Answer = Record<string, unknown>;
/** A question this participant has been shown, and what they answered, so that they can go back to it. */
type Seen = { question: Question; answer?: Answer };

/**
 * The questions seen so far, kept in the tab's session storage under the interview's id: the
 * snapshot names only the current question, and a participant who reloads can still go back.
 * Nothing secret is kept (the token stays in the address's fragment).
 */
function historyStore(interviewId: string | undefined) {
  const key = `evalp.interview.${interviewId ?? "new"}`;
  return {
    load(): Seen[] {
      try {
        const stored = JSON.parse(sessionStorage.getItem(key) ?? "[]");
        return Array.isArray(stored) ? (stored as Seen[]) : [];
      } catch {
        return [];
      }
    },
    save(seen: Seen[]) {
      try {
        sessionStorage.setItem(key, JSON.stringify(seen));
      } catch {
        // Storage full or refused: going back works until the next reload.
      }
    },
  };
}

function withQuestion(seen: Seen[], question: Question | undefined): Seen[] {
  if (!question) return seen;
  const at = seen.findIndex((each) => each.question.id === question.id);
  if (at === -1) return [...seen, { question }];
  const next = [...seen];
  next[at] = { ...next[at], question };
  return next;
}

/** How many times, and how long after, a lost realtime socket is opened again. */
const RECONNECTS = 5;
const RECONNECT_DELAY_MS = 2000;

/**
 * When an agent runs the interview: whether it is connected, and what it said, announced as it
 * comes (a log: new turns are read out, the earlier ones are not repeated).
 */
function AgentPresence({ connected, turns }: { connected: boolean; turns: TranscriptEntry[] }) {
  if (!connected && turns.length === 0) return null;
  return (
    <section aria-label="Your interviewer" className="agent">
      <p className={connected ? "presence connected" : "presence"}>
        {connected
          ? "Your interviewer is connected."
          : "Your interviewer is not connected right now: the interview waits for them."}
      </p>
      {turns.length > 0 ? (
        <div role="log" aria-live="polite" aria-label="What your interviewer said">
          <ol className="transcript">
            {turns.map((turn) => (
              <li key={turn.entry_id}>
                <span className="speaker">Interviewer</span>: {turn.text}
              </li>
            ))}
          </ol>
        </div>
      ) : null}
    </section>
  );
}

const ERRORS = {
  unauthenticated: "This interview link has expired or was withdrawn. Ask for a new link.",
  session_superseded: "A newer link to this interview was sent. Open the newest link you received.",
  not_found: "This interview could not be found. Ask for a new link.",
};

/** Words for a refused step, including the reasons of `invalid_transition`. */
function stepError(error: unknown): string {
  if (error instanceof EvalpApiError && error.code === "invalid_transition") {
    const reason = error.context.reason;
    if (reason === "consent_required") return "Please give your consent before answering.";
    if (reason === "interview_over") return "This interview is over; answers can no longer be changed.";
    if (reason === "not_ready_to_finish") return "Some required questions still need an answer.";
  }
  if (error instanceof EvalpApiError && error.code === "validation_error") {
    return `Check your answer: ${error.problems.map((problem) => problem.msg).join("; ")}`;
  }
  return errorWords(error, ERRORS);
}

/** `/interview#<participant_token>`: the hosted interview, taken over the participant endpoints. */
export function InterviewPage() {
  const token = useMemo(() => decodeURIComponent(location.hash.replace(/^#/, "")), []);
  const client = useMemo(() => (token ? api(token) : undefined), [token]);
  if (!client) {
    return (
      <main>
        <h1>Interview link incomplete</h1>
        <p>This interview link has lost its code. Open the whole link you received again.</p>
      </main>
    );
  }
  return <Interview client={client} />;
}

function Interview({ client }: { client: EvalpClient }) {
  const [snapshot, setSnapshot] = useState<Snapshot | undefined>();
  const [seen, setSeen] = useState<Seen[]>([]);
  const [editing, setEditing] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const store = useMemo(() => historyStore(snapshot?.interview_id), [snapshot?.interview_id]);
  const [connection, setConnection] = useState<Connection | undefined>();
  // Bumped to start again (a lost socket): the answer carries a fresh connection.
  const [starts, setStarts] = useState(0);

  // The socket pushes each revision while the HTTP answers bring theirs: one that arrives after a
  // newer one has been shown is stale and must not take the page back.
  const shown = useRef(-1);
  const show = useCallback((next: Snapshot) => {
    shown.current = Math.max(shown.current, next.revision);
    setSnapshot(next);
    const stored = historyStore(next.interview_id);
    const updated = withQuestion(stored.load(), next.question);
    stored.save(updated);
    setSeen(updated);
  }, []);

  // While a step's request is in flight, a pushed revision waits for its answer. The push often
  // comes first (the socket is quicker than the HTTP answer): shown at once, it would bring the next
  // question while the step still holds its buttons disabled, and an Enter pressed then is lost.
  const stepping = useRef(false);
  const held = useRef<Snapshot | undefined>(undefined);
  const showPushed = useCallback(
    (next: Snapshot) => {
      if (stepping.current) {
        if (!held.current || next.revision >= held.current.revision) held.current = next;
      } else if (next.revision >= shown.current) show(next);
    },
    [show],
  );
  const agent = useAgentTurns(connection, showPushed, () => {
    // A lost socket: start again a moment later, a few times at most, for a fresh connection.
    if (starts < RECONNECTS) setTimeout(() => setStarts((count) => count + 1), RECONNECT_DELAY_MS);
  });
  const { addTurns } = agent;

  useEffect(() => {
    let live = true;
    void starts;
    unwrap(client.POST("/v1/participant/interview/start"))
      .then((started) => {
        if (!live) return;
        show(started.interview);
        setConnection(started.connection);
        // The agent's turns before this page opened (a reload): the transcript has them.
        if (started.interview.consented) {
          unwrap(client.GET("/v1/participant/interview/transcript", { params: { query: { limit: 500 } } }))
            .then((page) => live && addTurns(page.items))
            .catch(() => undefined);
        }
      })
      .catch((failure) => live && setError(stepError(failure)));
    return () => {
      live = false;
    };
  }, [client, show, starts, addTurns]);

  async function step(run: () => Promise<{ interview: Snapshot }>) {
    stepping.current = true;
    setBusy(true);
    setError(undefined);
    try {
      show((await run()).interview);
      return true;
    } catch (failure) {
      setError(stepError(failure));
      return false;
    } finally {
      // A held push newer than the answer shows in the same render that enables the buttons.
      stepping.current = false;
      const pushed = held.current;
      held.current = undefined;
      if (pushed && pushed.revision > shown.current) show(pushed);
      setBusy(false);
    }
  }

  async function answer(question: Question, value: Answer) {
    const done = await step(() =>
      unwrap(
        client.POST("/v1/participant/interview/answers", {
          body: { question_id: question.id, answer: value },
        }),
      ),
    );
    if (!done) return;
    // `show` has just stored the next question: the answer is added to what storage holds now.
    const recorded = store
      .load()
      .map((each) => (each.question.id === question.id ? { ...each, answer: value } : each));
    store.save(recorded);
    setSeen(recorded);
    setEditing(undefined);
  }

  const alert = (
    <div role="alert" className="message error">
      {error ?? ""}
    </div>
  );
  if (!snapshot) {
    return (
      <main>
        <h1>Interview</h1>
        {error ? alert : <p role="status">Loading your interview…</p>}
      </main>
    );
  }
  // A finished interview is no longer available: its end is what the participant sees.
  if (snapshot.status === "completed" || snapshot.status === "ended") {
    return (
      <main>
        <h1>Thank you</h1>
        <p role="status">
          {snapshot.status === "completed"
            ? "Your interview is complete. Your answers have been recorded; you can close this page."
            : "This interview has ended. Your answers have been recorded; you can close this page."}
        </p>
      </main>
    );
  }
  if (!snapshot.available) {
    return (
      <main>
        <h1>Interview unavailable</h1>
        <p>
          This interview cannot be taken right now
          {snapshot.unavailable_reason ? ` (${snapshot.unavailable_reason})` : ""}.
        </p>
      </main>
    );
  }
  if (!snapshot.consented) {
    return (
      <Consent
        snapshot={snapshot}
        busy={busy}
        alert={alert}
        consent={() =>
          step(() => unwrap(client.POST("/v1/participant/interview/consent", { body: { consented: true } })))
        }
      />
    );
  }
  if (snapshot.status === "paused") {
    return (
      <main>
        <h1>Interview paused</h1>
        <p role="status">
          The interview is paused{snapshot.paused_reason ? ` (${snapshot.paused_reason})` : ""}.{" "}
          {agent.open
            ? "Keep this page open: it goes on by itself when the interview resumes."
            : "Reload this page later to go on."}
        </p>
        <AgentPresence connected={snapshot.agent_connected} turns={agent.turns} />
      </main>
    );
  }

  const editedAt = editing === undefined ? -1 : seen.findIndex((each) => each.question.id === editing);
  const current =
    editedAt >= 0 ? seen[editedAt] : seen.find((each) => each.question.id === snapshot.question?.id);
  const currentAt = current ? seen.indexOf(current) : seen.length;
  const previous = currentAt > 0 ? seen[currentAt - 1] : undefined;
  const percent = Math.round(snapshot.progress * 100);
  const section = snapshot.section;
  const missingSeen = snapshot.missing.filter(
    (item) => item.id !== current?.question.id && seen.some((each) => each.question.id === item.id),
  );

  return (
    <main>
      <h1>Interview</h1>
      {section ? (
        <header className="section">
          <h2>
            {section.title}
            <span className="muted">
              {" "}
              — section {section.position} of {section.total}
            </span>
          </h2>
          {section.description ? <p>{section.description}</p> : null}
        </header>
      ) : null}
      <progress max={100} value={percent} aria-label="Progress">
        {percent}%
      </progress>
      <p role="status" aria-live="polite" className="muted">
        {percent}% done
        {section ? `, ${section.answered} of ${section.count} answered in this section` : ""}
        {editing ? ". Changing an earlier answer" : ""}.
      </p>
      <AgentPresence connected={snapshot.agent_connected} turns={agent.turns} />
      {alert}
      {current ? (
        <QuestionForm
          key={`${current.question.id}:${snapshot.revision}`}
          seen={current}
          busy={busy}
          correcting={editing !== undefined}
          onAnswer={(value) => answer(current.question, value)}
          onBack={previous ? () => setEditing(previous.question.id) : undefined}
          onCancel={editing !== undefined ? () => setEditing(undefined) : undefined}
        />
      ) : null}
      {!current && !snapshot.ready_to_finish ? (
        <p>The next part of this interview is led by your interviewer. Keep this page open.</p>
      ) : null}
      {missingSeen.length > 0 ? (
        <nav aria-label="Questions still to answer">
          <h2>Still to answer</h2>
          <ul>
            {missingSeen.map((item) => (
              <li key={item.id}>
                <button type="button" className="link" onClick={() => setEditing(item.id)}>
                  {item.label}
                </button>
              </li>
            ))}
          </ul>
        </nav>
      ) : null}
      {snapshot.ready_to_finish && editing === undefined ? (
        <FinishPanel
          busy={busy}
          optionalLeft={current !== undefined}
          finish={() => step(() => unwrap(client.POST("/v1/participant/interview/finish")))}
        />
      ) : null}
    </main>
  );
}

function Consent(props: { snapshot: Snapshot; busy: boolean; alert: React.ReactNode; consent: () => void }) {
  const button = useRef<HTMLButtonElement>(null);
  useFocusOnShow(() => button.current);
  const { target_minutes_min: min, target_minutes_max: max } = props.snapshot;
  return (
    <main>
      <h1>Before you start</h1>
      <p>
        This interview asks you a series of questions. Your answers are recorded and used to evaluate them;
        you can go back and change an answer until you finish.
        {min !== undefined && max !== undefined ? ` It takes about ${min} to ${max} minutes.` : ""}
      </p>
      <p>By continuing you agree that your answers are recorded.</p>
      {props.alert}
      <button ref={button} type="button" disabled={props.busy} onClick={props.consent}>
        I agree, start the interview
      </button>
    </main>
  );
}

function FinishPanel(props: { busy: boolean; optionalLeft: boolean; finish: () => void }) {
  const button = useRef<HTMLButtonElement>(null);
  useFocusOnShow(() => button.current, !props.optionalLeft);
  return (
    <section aria-labelledby="finish-title" className="finish">
      <h2 id="finish-title">Ready to finish</h2>
      <p>
        {props.optionalLeft
          ? "Every required question is answered. You may answer the remaining questions or finish now."
          : "Every question is answered. Finish to send your interview."}
      </p>
      <button ref={button} type="button" disabled={props.busy} onClick={props.finish}>
        Finish the interview
      </button>
    </section>
  );
}

type FormProps = {
  seen: Seen;
  busy: boolean;
  correcting: boolean;
  onAnswer: (answer: Answer) => void;
  onBack: (() => void) | undefined;
  onCancel: (() => void) | undefined;
};

/** One question as a form: its input kind decides the control; focus moves to it when it appears. */
function QuestionForm({ seen, busy, correcting, onAnswer, onBack, onCancel }: FormProps) {
  const { question, answer } = seen;
  const form = useRef<HTMLFormElement>(null);
  const [value, setValue] = useState<Answer | undefined>(answer);
  const [problem, setProblem] = useState<string | undefined>();
  const ids = { prompt: useId(), problem: useId(), field: useId() };

  useFocusOnShow(
    () =>
      form.current?.querySelector<HTMLInputElement>("input:checked") ??
      form.current?.querySelector<HTMLElement>("input, textarea"),
  );

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    const missing = checkAnswer(question, value);
    if (missing) {
      setProblem(missing);
      return;
    }
    setProblem(undefined);
    if (value) onAnswer(value);
  }

  const described = problem ? ids.problem : undefined;
  return (
    <form ref={form} onSubmit={onSubmit} noValidate className="question">
      {question.input === "text" || question.input === "number" ? (
        <div className="field">
          <label htmlFor={ids.field} className="prompt">
            {question.prompt}
            {question.required ? null : <span className="muted"> (optional)</span>}
          </label>
          {question.input === "text" ? (
            <textarea
              id={ids.field}
              rows={4}
              maxLength={10000}
              aria-describedby={described}
              aria-invalid={problem !== undefined}
              value={typeof value?.text === "string" ? value.text : ""}
              onChange={(event) => setValue({ text: event.target.value })}
            />
          ) : (
            <input
              id={ids.field}
              type="number"
              inputMode="decimal"
              step="any"
              min={question.min}
              max={question.max}
              aria-describedby={described}
              aria-invalid={problem !== undefined}
              value={typeof value?.value === "number" ? String(value.value) : ""}
              onChange={(event) =>
                setValue(event.target.value === "" ? undefined : { value: Number(event.target.value) })
              }
            />
          )}
        </div>
      ) : (
        <fieldset aria-describedby={described}>
          <legend className="prompt">
            {question.prompt}
            {question.required ? null : <span className="muted"> (optional)</span>}
          </legend>
          <Choices question={question} value={value} onChange={setValue} />
        </fieldset>
      )}
      <p id={ids.problem} className="message error" role="alert">
        {problem ?? ""}
      </p>
      <div className="actions">
        {onBack ? (
          <button type="button" className="secondary" onClick={onBack} disabled={busy}>
            Previous question
          </button>
        ) : null}
        {onCancel ? (
          <button type="button" className="secondary" onClick={onCancel} disabled={busy}>
            Back to the current question
          </button>
        ) : null}
        <button type="submit" disabled={busy}>
          {correcting ? "Save the answer" : "Next"}
        </button>
      </div>
    </form>
  );
}

/** What is wrong with an answer before it is sent, in words, or undefined when it can be sent. */
function checkAnswer(question: Question, value: Answer | undefined): string | undefined {
  if (
    question.input === "multi_select" &&
    (!Array.isArray(value?.option_ids) || value.option_ids.length === 0)
  ) {
    return "Choose at least one option.";
  }
  if (!value) {
    if (question.input === "text") return "Write an answer.";
    if (question.input === "number") return "Enter a number.";
    return "Choose an answer.";
  }
  if (question.input === "text" && String(value.text ?? "").trim() === "") return "Write an answer.";
  if (question.input === "number" || question.input === "scale") {
    const number = value.value;
    if (typeof number !== "number" || Number.isNaN(number)) return "Enter a number.";
    if (question.min !== undefined && number < question.min) return `Enter at least ${question.min}.`;
    if (question.max !== undefined && number > question.max) return `Enter at most ${question.max}.`;
  }
  return undefined;
}

function Choices(props: {
  question: Question;
  value: Answer | undefined;
  onChange: (value: Answer) => void;
}) {
  const { question, value, onChange } = props;
  const name = useId();
  if (question.input === "multi_select") {
    const chosen = Array.isArray(value?.option_ids) ? (value.option_ids as string[]) : [];
    return (
      <div className="choices">
        {question.options.map((option) => (
          <label key={option.id} className="choice">
            <input
              type="checkbox"
              name={name}
              value={option.id}
              checked={chosen.includes(option.id)}
              onChange={(event) =>
                onChange({
                  option_ids: event.target.checked
                    ? [...chosen, option.id]
                    : chosen.filter((id) => id !== option.id),
                })
              }
            />
            {option.label}
          </label>
        ))}
      </div>
    );
  }
  if (question.input === "scale") {
    const min = question.min ?? 1;
    const max = question.max ?? 5;
    const steps = Array.from({ length: Math.max(0, Math.min(max - min, 20)) + 1 }, (_, index) => min + index);
    return (
      <div className="choices scale">
        {steps.map((step) => (
          <label key={step} className="choice">
            <input
              type="radio"
              name={name}
              value={step}
              checked={value?.value === step}
              onChange={() => onChange({ value: step })}
            />
            {step}
            {step === min ? <span className="muted"> (lowest)</span> : null}
            {step === max ? <span className="muted"> (highest)</span> : null}
          </label>
        ))}
      </div>
    );
  }
  return (
    <div className="choices">
      {question.options.map((option) => (
        <label key={option.id} className="choice">
          <input
            type="radio"
            name={name}
            value={option.id}
            checked={value?.option_id === option.id}
            onChange={() => onChange({ option_id: option.id })}
          />
          {option.label}
        </label>
      ))}
    </div>
  );
}
