import { type components, type EvalpClient, unwrap } from "@evalp/client";
import { useEffect, useId, useMemo, useState } from "react";
import { errorWords } from "./api.js";
import { Chart } from "./chart.js";
import { ENV, ENV_WORDS, type EnvironmentPath, ErrorLine } from "./console-ui.js";

type Summary = components["schemas"]["AnalyticsSummary"];

const DAY_MS = 24 * 60 * 60 * 1000;
const SPANS = ["7", "14", "30"] as const;
const STARTED = { label: "Started", colour: "#1d4ed8" };
const COMPLETED = { label: "Completed", colour: "#047857" };
const COMPLETION_SERIES = [STARTED, COMPLETED];
const BAND = [{ label: "Results", colour: "#7c3aed" }];

/** The start of today (local time), the end of the last day a chart shows. */
function tomorrow(): Date {
  const day = new Date();
  day.setHours(0, 0, 0, 0);
  return new Date(day.getTime() + DAY_MS);
}

type Loaded = { whole: Summary; days: { label: string; summary: Summary }[] };

/**
 * The environment's interviews over the last days: completion day by day, and each scorecard
 * axis's results by band over the whole window; the privacy floor said in words when it applies.
 */
export function Analytics(props: { client: EvalpClient; path: EnvironmentPath; environmentName: string }) {
  const { client, path } = props;
  const [span, setSpan] = useState<(typeof SPANS)[number]>("14");
  const [loaded, setLoaded] = useState<Loaded | undefined>();
  const [error, setError] = useState<string | undefined>();
  const spanId = useId();

  useEffect(() => {
    let live = true;
    setLoaded(undefined);
    setError(undefined);
    const end = tomorrow();
    const days = Number(span);
    const summary = (starts: Date, ends: Date) =>
      unwrap(
        client.GET(`${ENV}/analytics/summary`, {
          params: { path, query: { starts_at: starts.toISOString(), ends_at: ends.toISOString() } },
        }),
      );
    const starts = Array.from(
      { length: days },
      (_, index) => new Date(end.getTime() - (days - index) * DAY_MS),
    );
    Promise.all([
      summary(starts[0] ?? end, end),
      ...starts.map((start) => summary(start, new Date(start.getTime() + DAY_MS))),
    ])
      .then(([whole, ...daily]) => {
        if (!live || !whole) return;
        setLoaded({
          whole,
          days: daily.map((one, index) => ({
            label: (starts[index] ?? end).toLocaleDateString(undefined, { month: "short", day: "numeric" }),
            summary: one,
          })),
        });
      })
      .catch(
        (failure) =>
          live &&
          setError(errorWords(failure, { forbidden: "You may not read analytics (analytics:read)." })),
      );
    return () => {
      live = false;
    };
  }, [client, path, span]);

  const completion = useMemo(
    () =>
      loaded && {
        categories: loaded.days.map((day) => day.label),
        values: [
          loaded.days.map((day) => day.summary.sessions_started),
          loaded.days.map((day) => day.summary.sessions_completed),
        ],
      },
    [loaded],
  );

  return (
    <section aria-label={`Analytics of ${props.environmentName}`} className="operations">
      <h4>Analytics</h4>
      <div className="filter">
        <label htmlFor={spanId}>Window</label>
        <select
          id={spanId}
          value={span}
          onChange={(event) => setSpan(SPANS.find((days) => days === event.target.value) ?? "14")}
        >
          {SPANS.map((days) => (
            <option key={days} value={days}>
              Last {days} days
            </option>
          ))}
        </select>
      </div>
      <ErrorLine error={error} />
      {loaded === undefined && !error ? <p role="status">Loading the analytics…</p> : null}
      {loaded && completion ? (
        <>
          <p>
            {loaded.whole.sessions_started} interviews started, {loaded.whole.sessions_completed} completed (
            {Math.round(loaded.whole.completion_rate * 100)}%).
          </p>
          {loaded.whole.sessions_started === 0 ? (
            <p className="empty">
              No interview started in this window: create a participant session with POST {ENV_WORDS}
              /evaluations/…/participant-sessions and send its link, or choose a longer window.
            </p>
          ) : null}
          {loaded.whole.privacy_floor_applied ? (
            <p className="privacy" role="note">
              Privacy floor: fewer than five interviews started in this window, so medians, per-question
              figures and the axes' distributions are withheld; with so few, they could single out a
              participant. Choose a longer window, or come back when more have taken part.
            </p>
          ) : null}
          <h5 id={`completion-${path.environment_id}`}>Completion by day</h5>
          <Chart
            label={`Interviews started and completed by day, last ${span} days`}
            kind="lines"
            categories={completion.categories}
            series={COMPLETION_SERIES}
            values={completion.values}
          />
          <table aria-labelledby={`completion-${path.environment_id}`} className="numbers">
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Started</th>
                <th scope="col">Completed</th>
              </tr>
            </thead>
            <tbody>
              {loaded.days
                .filter((day) => day.summary.sessions_started > 0)
                .map((day) => (
                  <tr key={day.label}>
                    <th scope="row">{day.label}</th>
                    <td>{day.summary.sessions_started}</td>
                    <td>{day.summary.sessions_completed}</td>
                  </tr>
                ))}
            </tbody>
          </table>
          {loaded.whole.axis_metrics.map((axis) => (
            <AxisDistribution key={axis.axis} axis={axis} />
          ))}
        </>
      ) : null}
    </section>
  );
}

type AxisMetrics = Summary["axis_metrics"][number];

/** One axis's results by band, as a chart and as a table. */
function AxisDistribution({ axis }: { axis: AxisMetrics }) {
  const categories = useMemo(() => axis.bands.map((band) => band.band_label), [axis]);
  const values = useMemo(() => [axis.bands.map((band) => band.count)], [axis]);
  const headingId = `axis-${axis.axis}`;
  return (
    <div className="axis">
      <h5 id={headingId}>
        {axis.label}: {axis.scored} scored
        {axis.median === null ? "" : `, median ${axis.median}`}
        {axis.mean === null ? "" : `, mean ${Math.round(axis.mean * 100) / 100}`}
      </h5>
      {axis.bands.length === 0 ? (
        <p>No result has a band on this axis yet: its scorecard gives it none, or nothing is scored.</p>
      ) : (
        <>
          <Chart
            label={`${axis.label}: results by band`}
            kind="bars"
            categories={categories}
            series={BAND}
            values={values}
          />
          <table aria-labelledby={headingId} className="numbers">
            <thead>
              <tr>
                <th scope="col">Band</th>
                <th scope="col">Results</th>
              </tr>
            </thead>
            <tbody>
              {axis.bands.map((band) => (
                <tr key={band.band_id}>
                  <th scope="row">{band.band_label}</th>
                  <td>{band.count}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </div>
  );
}
