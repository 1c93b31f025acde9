import { type components, EvalpApiError, type EvalpClient, unwrap } from "@evalp/client";
import { useCallback, useEffect, useId, useState } from "react";
import { errorWords } from "./api.js";

type ListedEvaluation = components["schemas"]["ListedEvaluation"];
type Delivery = components["schemas"]["WebhookDelivery"];
type InterviewEntry = components["schemas"]["InterviewEntry"];
type EvaluationResult = components["schemas"]["EvaluationResult"];

/** An environment's place in the API: every path below starts with it. */
export type EnvironmentPath = { organization_id: string; app_id: string; environment_id: string };

const ENV = "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}";
/** How the empty states name the environment's endpoints (docs use `ENV/…` the same way). */
const ENV_WORDS = "/v1/organizations/…/apps/…/environments/…";

const EVALUATION_STATUSES = ["pending", "active", "paused", "completed", "ended_incomplete"] as const;
const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "dead_letter"] as const;
type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Rows a list asks for at a time. */
const PAGE = 50;

const when = (iso: string) => new Date(iso).toLocaleString();

/** A status filter: "any status" or one of the list's statuses. */
function StatusFilter<S extends string>(props: {
  label: string;
  statuses: readonly S[];
  value: S | "";
  onChange: (status: S | "") => void;
}) {
  const id = useId();
  return (
    <div className="filter">
      <label htmlFor={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        onChange={(event) => {
          const chosen = props.statuses.find((status) => status === event.target.value);
          props.onChange(chosen ?? "");
        }}
      >
        <option value="">Any status</option>
        {props.statuses.map((status) => (
          <option key={status} value={status}>
            {status}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The environment's evaluations, newest first, filtered by status; each opens its own page. */
export function Evaluations(props: {
  client: EvalpClient;
  path: EnvironmentPath;
  environmentName: string;
  onOpen: (evaluationId: string) => void;
}) {
  const { client, path } = props;
  const [status, setStatus] = useState<(typeof EVALUATION_STATUSES)[number] | "">("");
  const [items, setItems] = useState<ListedEvaluation[] | undefined>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>();

  // The API lists evaluations newest first; a next page is appended below the ones shown.
  const fetchPage = useCallback(
    (after: string | null) => {
      const query = {
        limit: PAGE,
        ...(status === "" ? {} : { status }),
        ...(after ? { cursor: after } : {}),
      };
      return unwrap(client.GET(`${ENV}/evaluations`, { params: { path, query } }));
    },
    [client, path, status],
  );

  useEffect(() => {
    let live = true;
    setItems(undefined);
    setError(undefined);
    fetchPage(null)
      .then((page) => {
        if (!live) return;
        setItems(page.items);
        setCursor(page.next_cursor);
      })
      .catch((failure) => live && setError(errorWords(failure, {})));
    return () => {
      live = false;
    };
  }, [fetchPage]);

  function more() {
    fetchPage(cursor)
      .then((page) => {
        setItems((shown) => [...(shown ?? []), ...page.items]);
        setCursor(page.next_cursor);
      })
      .catch((failure) => setError(errorWords(failure, {})));
  }

  return (
    <section aria-label={`Evaluations in ${props.environmentName}`} className="operations">
      <h4>Evaluations</h4>
      <StatusFilter
        label="Evaluation status"
        statuses={EVALUATION_STATUSES}
        value={status}
        onChange={setStatus}
      />
      {error ? (
        <p role="alert" className="message error">
          {error}
        </p>
      ) : null}
      {items === undefined && !error ? <p role="status">Loading the evaluations…</p> : null}
      {items?.length === 0 ? (
        <p>
          {status === ""
            ? `No evaluations yet: create one with POST ${ENV_WORDS}/evaluations.`
            : `No ${status} evaluation. Choose another status, or any status.`}
        </p>
      ) : null}
      {items && items.length > 0 ? (
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
      ) : null}
      {items && cursor ? (
        <button type="button" className="secondary" onClick={more}>
          Show more evaluations
        </button>
      ) : null}
    </section>
  );
}

/** One entry as a line of the transcript: who spoke and what, or what happened. */
function entryLine(entry: InterviewEntry): { who: string; text: string; said: boolean } {
  const { speaker, text } = entry.payload;
  if (typeof speaker === "string" && typeof text === "string") return { who: speaker, text, said: true };
  return { who: entry.actor, text: entry.kind.replaceAll("_", " "), said: false };
}

type Transcript = { status: string; entries: InterviewEntry[] } | "not_started";
type Scoring = { result: EvaluationResult } | { notReady: string };

/** One evaluation: its interview's transcript (every page of it) and its latest result. */
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
      let after: number | undefined;
      // Sequence pages (docs/paging.md): follow next_after_seq until a page comes back empty.
      for (;;) {
        const query = { limit: 200, ...(after === undefined ? {} : { after_seq: after }) };
        const page = await unwrap(
          client.GET(`${ENV}/evaluations/{evaluation_id}/interview`, { params: { path: evaluation, query } }),
        );
        status = page.status;
        entries.push(...page.entries);
        if (page.entries.length === 0 || page.next_after_seq === after) break;
        after = page.next_after_seq;
      }
      if (live) setTranscript({ status, entries });
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
      {error ? (
        <p role="alert" className="message error">
          {error}
        </p>
      ) : null}
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
            <p>
              Outcome {scoring.result.outcome.replaceAll("_", " ")}, scored {when(scoring.result.scored_at)}.
            </p>
            <table>
              <thead>
                <tr>
                  <th scope="col">Axis</th>
                  <th scope="col">Score</th>
                  <th scope="col">Band</th>
                </tr>
              </thead>
              <tbody>
                {scoring.result.report.axes.map((axis) => (
                  <tr key={axis.axis}>
                    <th scope="row">{axis.label}</th>
                    <td>{axis.score ?? "no score"}</td>
                    <td>{axis.band_label ?? "no band"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        ) : null}
      </section>
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

/** The environment's webhook deliveries, filtered by status, each with a Replay button. */
export function Deliveries(props: { client: EvalpClient; path: EnvironmentPath; environmentName: string }) {
  const { client, path } = props;
  const [status, setStatus] = useState<DeliveryStatus | "">("");
  const [items, setItems] = useState<Delivery[] | undefined>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const [busy, setBusy] = useState<string | undefined>();

  const fetchPage = useCallback(
    (after: string | null) => {
      const query = {
        limit: PAGE,
        ...(status === "" ? {} : { status }),
        ...(after ? { cursor: after } : {}),
      };
      return unwrap(client.GET(`${ENV}/webhook-deliveries`, { params: { path, query } }));
    },
    [client, path, status],
  );

  /** The first page again (a change of filter, or Refresh); `live` is false once it is stale. */
  const load = useCallback(
    (live: () => boolean) => {
      fetchPage(null)
        .then((page) => {
          if (!live()) return;
          setError(undefined);
          setItems(page.items);
          setCursor(page.next_cursor);
        })
        .catch((failure) => live() && setError(errorWords(failure, {})));
    },
    [fetchPage],
  );

  function more() {
    fetchPage(cursor)
      .then((page) => {
        setItems((shown) => [...(shown ?? []), ...page.items]);
        setCursor(page.next_cursor);
      })
      .catch((failure) => setError(errorWords(failure, {})));
  }

  useEffect(() => {
    let live = true;
    setItems(undefined);
    setError(undefined);
    load(() => live);
    return () => {
      live = false;
    };
  }, [load]);

  async function replay(delivery: Delivery) {
    setBusy(delivery.id);
    setMessage(undefined);
    try {
      // The client sends an Idempotency-Key of its own with every POST.
      const replayed = await unwrap(
        client.POST(`${ENV}/webhook-deliveries/{delivery_id}/replay`, {
          params: { path: { ...path, delivery_id: delivery.id } },
        }),
      );
      setItems((listed) => listed?.map((item) => (item.id === replayed.id ? replayed : item)));
      setMessage(`Delivery ${replayed.id} replayed: it is ${replayed.status} now.`);
    } catch (failure) {
      setMessage(errorWords(failure, { forbidden: "You may not replay deliveries (webhooks:write)." }));
    } finally {
      setBusy(undefined);
    }
  }

  return (
    <section aria-label={`Webhook deliveries in ${props.environmentName}`} className="operations">
      <h4>Webhook deliveries</h4>
      <div className="actions">
        <StatusFilter
          label="Delivery status"
          statuses={DELIVERY_STATUSES}
          value={status}
          onChange={setStatus}
        />
        <button type="button" className="secondary" onClick={() => load(() => true)}>
          Refresh deliveries
        </button>
      </div>
      {error ? (
        <p role="alert" className="message error">
          {error}
        </p>
      ) : null}
      {items === undefined && !error ? <p role="status">Loading the deliveries…</p> : null}
      {items?.length === 0 ? (
        <p>
          {status === ""
            ? `No deliveries yet: add an endpoint with POST ${ENV_WORDS}/webhooks, then send it a test event with POST ${ENV_WORDS}/webhooks/{id}/test.`
            : `No ${status} delivery. Choose another status, or any status.`}
        </p>
      ) : null}
      {items && items.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((delivery) => (
              <tr key={delivery.id} data-delivery={delivery.id}>
                <td>{delivery.event_type}</td>
                <td className="delivery-status">{delivery.status}</td>
                <td>{delivery.attempt_count}</td>
                <td>{delivery.last_error ?? ""}</td>
                <td>{when(delivery.created_at)}</td>
                <td>
                  <button
                    type="button"
                    disabled={busy === delivery.id}
                    aria-label={`Replay the ${delivery.event_type} delivery ${delivery.id}`}
                    onClick={() => replay(delivery)}
                  >
                    Replay
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {items && cursor ? (
        <button type="button" className="secondary" onClick={more}>
          Show more deliveries
        </button>
      ) : null}
      <div role="status" aria-live="polite" className="message">
        {message ?? ""}
      </div>
    </section>
  );
}
