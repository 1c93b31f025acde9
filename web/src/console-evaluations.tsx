import { type components, EvalpApiError, type EvalpClient, unwrap } from "@evalp/client";
import { type FormEvent, useCallback, useEffect, useId, useState } from "react";
import { errorWords } from "./api.js";
import {
  ENV,
  ENV_WORDS,
  type EnvironmentPath,
  ErrorLine,
  PAGE,
  PagedRows,
  StatusFilter,
  StatusLine,
  TextFilter,
  when,
} from "./console-ui.js";
import { usePagedList } from "./paged-list.js";

type InterviewEntry = components["schemas"]["InterviewEntry"];
type InterviewMetrics = components["schemas"]["InterviewMetrics"];
type EvaluationResult = components["schemas"]["EvaluationResult"];
type Bundle = components["schemas"]["Bundle"];

const EVALUATION_STATUSES = ["pending", "active", "paused", "completed", "ended_incomplete"] as const;
type EvaluationStatus = (typeof EVALUATION_STATUSES)[number];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A day chosen in a date field as the date-time the API filters by (the day's start, local time). */
function dayStart(day: string): string | undefined {
  if (day === "") return undefined;
  const start = new Date(`${day}T00:00:00`);
  return Number.isNaN(start.getTime()) ? undefined : start.toISOString();
}

/** The environment's evaluations, newest first, filtered; each opens its own page. */
export function Evaluations(props: {
  client: EvalpClient;
  path: EnvironmentPath;
  environmentName: string;
  onOpen: (evaluationId: string) => void;
}) {
  const { client, path } = props;
  const [status, setStatus] = useState<EvaluationStatus | "">("");
  const [subject, setSubject] = useState("");
  const [after, setAfter] = useState("");
  const afterId = useId();
  // A partly typed subject id filters nothing yet: the API would refuse it (422).
  const subjectId = UUID.test(subject.trim()) ? subject.trim() : undefined;
  const createdAfter = dayStart(after);

  const evaluations = usePagedList(
    useCallback(
      (cursor: string | null) => {
        const query = {
          limit: PAGE,
          ...(status === "" ? {} : { status }),
          ...(subjectId ? { subject_id: subjectId } : {}),
          ...(createdAfter ? { created_after: createdAfter } : {}),
          ...(cursor ? { cursor } : {}),
        };
        return unwrap(client.GET(`${ENV}/evaluations`, { params: { path, query } }));
      },
      [client, path, status, subjectId, createdAfter],
    ),
  );
  const filtered = status !== "" || subjectId !== undefined || createdAfter !== undefined;

  return (
    <section aria-label={`Evaluations in ${props.environmentName}`} className="operations">
      <h4>Evaluations</h4>
      <div className="actions">
        <StatusFilter
          label="Evaluation status"
          statuses={EVALUATION_STATUSES}
          value={status}
          onChange={setStatus}
        />
        <TextFilter label="Subject id" value={subject} onChange={setSubject} />
        <div className="filter">
          <label htmlFor={afterId}>Created since</label>
          <input id={afterId} type="date" value={after} onChange={(event) => setAfter(event.target.value)} />
        </div>
      </div>
      {subject.trim() !== "" && subjectId === undefined ? (
        <p className="hint">A subject id is a UUID: the filter applies once it is whole.</p>
      ) : null}
      <PagedRows
        list={evaluations}
        noun="evaluations"
        empty={
          !filtered
            ? `No evaluations yet: create one with POST ${ENV_WORDS}/evaluations.`
            : status !== "" && subjectId === undefined && createdAfter === undefined
              ? `No ${status} evaluation. Choose another status, or any status.`
              : "No evaluation matches these filters. Widen them: any status, another subject, an earlier day."
        }
      >
        {(items) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Evaluation</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Scored</th>
              </tr>
            </thead>
            <tbody>
              {items.map((evaluation) => (
                <tr key={evaluation.id}>
                  <td>
                    <button type="button" className="link" onClick={() => props.onOpen(evaluation.id)}>
                      {evaluation.id}
                    </button>
                  </td>
                  <td>{evaluation.status}</td>
                  <td>{when(evaluation.created_at)}</td>
                  <td>{evaluation.scored_at ? when(evaluation.scored_at) : "not yet"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </PagedRows>
    </section>
  );
}

/** One entry as a line of the transcript: who spoke and what, or what happened. */
function entryLine(entry: InterviewEntry): { who: string; text: string; said: boolean } {
  const { speaker, text } = entry.payload;
  if (typeof speaker === "string" && typeof text === "string") return { who: speaker, text, said: true };
  return { who: entry.actor, text: entry.kind.replaceAll("_", " "), said: false };
}

type Transcript = { status: string; entries: InterviewEntry[]; metrics: InterviewMetrics } | "not_started";
type Scoring = { result: EvaluationResult } | { notReady: string };

/** The interview's counts, in words, in the order an operator reads them. */
const METRICS: [keyof InterviewMetrics, string][] = [
  ["duration_seconds", "Duration (seconds)"],
  ["attempts", "Attempts"],
  ["corrections", "Corrections"],
  ["clarifications", "Clarifications"],
  ["consistency_follow_ups", "Consistency follow-ups"],
  ["rejected_proposals", "Rejected proposals"],
  ["scenario_evidence", "Scenario evidence"],
  ["scenario_gaps", "Scenario gaps"],
  ["turn_latency_p50_ms", "Turn latency p50 (ms)"],
  ["turn_latency_p95_ms", "Turn latency p95 (ms)"],
  ["estimated_cost_usd", "Estimated cost (USD)"],
];

/** One evaluation: its result (axes, bands, sections, trace; rescore), metrics and transcript. */
export function EvaluationPage(props: {
  client: EvalpClient;
  path: EnvironmentPath;
  evaluationId: string;
  onBack: () => void;
}) {
  const { client, path, evaluationId } = props;
  const [transcript, setTranscript] = useState<Transcript | undefined>();
  const [scoring, setScoring] = useState<Scoring | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    const evaluation = { ...path, evaluation_id: evaluationId };
    (async () => {
      const entries: InterviewEntry[] = [];
      let status = "";
      let metrics: InterviewMetrics | undefined;
      let after: number | undefined;
      // Sequence pages (docs/paging.md): follow next_after_seq until a page comes back empty.
      for (;;) {
        const query = { limit: 200, ...(after === undefined ? {} : { after_seq: after }) };
        const page = await unwrap(
          client.GET(`${ENV}/evaluations/{evaluation_id}/interview`, { params: { path: evaluation, query } }),
        );
        status = page.status;
        metrics = page.metrics;
        entries.push(...page.entries);
        if (page.entries.length === 0 || page.next_after_seq === after) break;
        after = page.next_after_seq;
      }
      if (live && metrics) setTranscript({ status, entries, metrics });
    })().catch((failure) => {
      if (!live) return;
      if (failure instanceof EvalpApiError && failure.code === "not_found") setTranscript("not_started");
      else setError(errorWords(failure, {}));
    });
    unwrap(client.GET(`${ENV}/evaluations/{evaluation_id}/result`, { params: { path: evaluation } }))
      .then((result) => live && setScoring({ result }))
      .catch((failure) => {
        if (!live) return;
        if (failure instanceof EvalpApiError && failure.code === "result_not_ready") {
          const status = typeof failure.context.status === "string" ? failure.context.status : "not over";
          setScoring({ notReady: status });
        } else setError(errorWords(failure, {}));
      });
    return () => {
      live = false;
    };
  }, [client, path, evaluationId]);

  return (
    <main className="wide">
      <div className="actions spread">
        <h1>Evaluation</h1>
        <button type="button" className="secondary" onClick={props.onBack}>
          Back to the console
        </button>
      </div>
      <p className="muted">Id {evaluationId}</p>
      <ErrorLine error={error} />
      <section aria-labelledby="result-heading" className="card">
        <h2 id="result-heading">Result</h2>
        {scoring === undefined && !error ? <p role="status">Loading the result…</p> : null}
        {scoring && "notReady" in scoring ? (
          <p>
            Not scored yet: the evaluation is {scoring.notReady}. A result is stored once the interview is
            over; come back in a moment.
          </p>
        ) : null}
        {scoring && "result" in scoring ? (
          <>
            <ResultReport result={scoring.result} />
            <Rescore
              client={client}
              path={path}
              evaluationId={evaluationId}
              current={scoring.result.bundle_id}
              onRescored={(result) => setScoring({ result })}
            />
          </>
        ) : null}
      </section>
      {transcript && transcript !== "not_started" ? (
        <section aria-labelledby="metrics-heading" className="card">
          <h2 id="metrics-heading">Metrics</h2>
          <table>
            <tbody>
              {METRICS.map(([field, words]) => {
                const value = transcript.metrics[field];
                return typeof value === "number" ? (
                  <tr key={field}>
                    <th scope="row">{words}</th>
                    <td>{value}</td>
                  </tr>
                ) : null;
              })}
            </tbody>
          </table>
        </section>
      ) : null}
      <section aria-labelledby="transcript-heading" className="card">
        <h2 id="transcript-heading">Transcript</h2>
        {transcript === undefined && !error ? <p role="status">Loading the transcript…</p> : null}
        {transcript === "not_started" ? (
          <p>
            The participant has not started yet: create a participant session with POST {ENV_WORDS}
            /evaluations/{evaluationId}/participant-sessions and send its link.
          </p>
        ) : null}
        {transcript && transcript !== "not_started" ? (
          <>
            <p className="muted">Interview status {transcript.status}</p>
            <ol className="transcript">
              {transcript.entries.map((entry) => {
                const line = entryLine(entry);
                return (
                  // What happened without words (consent, a status change) is set apart from speech.
                  <li key={entry.id} className={line.said ? undefined : "muted"}>
                    <span className="speaker">{line.who}</span>: {line.text}
                  </li>
                );
              })}
            </ol>
          </>
        ) : null}
      </section>
    </main>
  );
}

/** The report: each axis's score and band, the report's sections, and how each axis was computed. */
function ResultReport({ result }: { result: EvaluationResult }) {
  return (
    <>
      <p>
        Outcome {result.outcome.replaceAll("_", " ")}, scored {when(result.scored_at)} against bundle{" "}
        <code>{result.bundle_id}</code>.
      </p>
      {result.report.title ? <h3>{result.report.title}</h3> : null}
      <table>
        <thead>
          <tr>
            <th scope="col">Axis</th>
            <th scope="col">Score</th>
            <th scope="col">Band</th>
          </tr>
        </thead>
        <tbody>
          {result.report.axes.map((axis) => (
            <tr key={axis.axis}>
              <th scope="row">{axis.label}</th>
              <td>{axis.score ?? "no score"}</td>
              <td>{axis.band_label ?? "no band"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {result.report.sections.map((section) => (
        <p key={section.id} className="muted">
          {section.title}:{" "}
          {section.axes.map((axis) => `${axis.label} ${axis.score ?? "no score"}`).join(", ") || "no axis"}
        </p>
      ))}
      <details>
        <summary>How each axis was computed (trace)</summary>
        <pre className="trace">{JSON.stringify(result.trace, null, 2)}</pre>
      </details>
    </>
  );
}

/** Rescoring against a published bundle of the app: the new result replaces the one shown. */
function Rescore(props: {
  client: EvalpClient;
  path: EnvironmentPath;
  evaluationId: string;
  current: string;
  onRescored: (result: EvaluationResult) => void;
}) {
  const { client, path } = props;
  const [bundles, setBundles] = useState<Bundle[] | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const id = useId();

  useEffect(() => {
    let live = true;
    const app = { organization_id: path.organization_id, app_id: path.app_id };
    unwrap(
      client.GET("/v1/organizations/{organization_id}/apps/{app_id}/bundles", {
        params: { path: app, query: { limit: 100 } },
      }),
    )
      .then((page) => live && setBundles(page.items.filter((bundle) => bundle.status === "published")))
      .catch((failure) => live && setMessage(errorWords(failure, {})));
    return () => {
      live = false;
    };
  }, [client, path]);

  async function rescore(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const bundleId = String(new FormData(event.currentTarget).get("bundle_id") ?? "");
    setBusy(true);
    setMessage(undefined);
    try {
      const result = await unwrap(
        client.POST(`${ENV}/evaluations/{evaluation_id}/rescore`, {
          params: { path: { ...path, evaluation_id: props.evaluationId } },
          body: { bundle_id: bundleId },
        }),
      );
      props.onRescored(result);
      setMessage(`Rescored ${when(result.scored_at)}: the result above is the new one.`);
    } catch (failure) {
      setMessage(
        errorWords(failure, {
          bundle_not_published: "That bundle is not published: publish it first, or choose another.",
          forbidden: "You may not rescore evaluations (evaluations:write).",
        }),
      );
    } finally {
      setBusy(false);
    }
  }

  if (bundles === undefined) return <StatusLine message={message} />;
  return (
    <form onSubmit={rescore} aria-label="Rescore the evaluation" className="rescore">
      <h3>Rescore</h3>
      {bundles.length === 0 ? (
        <p>No published bundle to rescore against: publish a bundle of this app first.</p>
      ) : (
        <>
          <label htmlFor={id}>Bundle to score against</label>
          <select id={id} name="bundle_id" defaultValue={props.current}>
            {bundles.map((bundle) => (
              <option key={bundle.id} value={bundle.id}>
                {bundle.name} r{bundle.revision}
                {bundle.id === props.current ? " (this result's)" : ""}
              </option>
            ))}
          </select>
          <div className="actions">
            <button type="submit" disabled={busy}>
              Rescore
            </button>
          </div>
        </>
      )}
      <StatusLine message={message} />
    </form>
  );
}
