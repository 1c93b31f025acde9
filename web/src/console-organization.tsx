import { type components, type EvalpClient, unwrap } from "@evalp/client";
import { useCallback, useEffect, useState } from "react";
import { errorWords } from "./api.js";
import { ENV, type EnvironmentPath, ErrorLine, PAGE, PagedRows, TextFilter, when } from "./console-ui.js";
import { usePagedList } from "./paged-list.js";

type Quotas = components["schemas"]["EnvironmentQuotas"];
type Counter = keyof Quotas["limits"];

/** The quota counters in words, in the order docs/configuration of quotas lists them. */
const COUNTERS: [Counter, string][] = [
  ["evaluations", "Evaluations"],
  ["active_subjects", "Active subjects"],
  ["active_participant_sessions", "Active participant sessions"],
  ["programs", "Programs"],
  ["webhook_endpoints", "Webhook endpoints"],
  ["behavioral_event_batch_size", "Behavioral events per batch"],
  ["continuous_event_batch_size", "Continuous answers per batch"],
];

/** Batch sizes are limits per call, not counts that fill up: they have no usage to show. */
const PER_CALL: readonly Counter[] = ["behavioral_event_batch_size", "continuous_event_batch_size"];

/** The environment's quotas: each counter's usage against its limit. */
export function QuotaUsage(props: { client: EvalpClient; path: EnvironmentPath; environmentName: string }) {
  const { client, path } = props;
  const [quotas, setQuotas] = useState<Quotas | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    unwrap(client.GET(`${ENV}/quotas`, { params: { path } }))
      .then((read) => live && setQuotas(read))
      .catch((failure) => live && setError(errorWords(failure, {})));
    return () => {
      live = false;
    };
  }, [client, path]);

  return (
    <section aria-label={`Quotas of ${props.environmentName}`} className="operations">
      <h4>Quotas</h4>
      <ErrorLine error={error} />
      {quotas === undefined && !error ? <p role="status">Loading the quotas…</p> : null}
      {quotas ? (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Counter</th>
                <th scope="col">Used</th>
                <th scope="col">Limit</th>
                <th scope="col">
                  <span className="visually-hidden">Share used</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {COUNTERS.map(([counter, words]) => {
                const limit = quotas.limits[counter];
                const used = quotas.usage[counter];
                const perCall = PER_CALL.includes(counter);
                return (
                  <tr key={counter} data-counter={counter}>
                    <th scope="row">{words}</th>
                    <td>{perCall ? "per call" : used}</td>
                    <td>{limit}</td>
                    <td>
                      {perCall ? null : (
                        <meter
                          aria-label={`${words}: ${used} of ${limit}`}
                          min={0}
                          max={Math.max(1, limit)}
                          value={Math.min(used, Math.max(1, limit))}
                          high={Math.max(1, limit) * 0.8}
                        />
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <p className="hint">
            A counter at its limit refuses new creations (409 quota_exceeded). An owner raises a limit with
            PATCH …/quotas and the revision {quotas.revision}.
          </p>
        </>
      ) : null}
    </section>
  );
}

/** The organization's audit trail, newest first, filtered by action and resource type. */
export function AuditTrail(props: { client: EvalpClient; organizationId: string }) {
  const { client, organizationId } = props;
  const [action, setAction] = useState("");
  const [resourceType, setResourceType] = useState("");
  const actionFilter = action.trim();
  const resourceFilter = resourceType.trim();

  const events = usePagedList(
    useCallback(
      (cursor: string | null) => {
        const query = {
          limit: PAGE,
          ...(actionFilter === "" ? {} : { action: actionFilter }),
          ...(resourceFilter === "" ? {} : { resource_type: resourceFilter }),
          ...(cursor ? { cursor } : {}),
        };
        return unwrap(
          client.GET("/v1/organizations/{organization_id}/audit-events", {
            params: { path: { organization_id: organizationId }, query },
          }),
        );
      },
      [client, organizationId, actionFilter, resourceFilter],
    ),
  );

  return (
    <section aria-label="Audit trail" className="card">
      <h2>Audit trail</h2>
      <div className="actions">
        <TextFilter label="Action" value={action} onChange={setAction} />
        <TextFilter label="Resource type" value={resourceType} onChange={setResourceType} />
      </div>
      <PagedRows
        list={events}
        noun="audit events"
        empty={
          actionFilter === "" && resourceFilter === ""
            ? "Nothing recorded yet: every change made in the organization (an app, a key, a member) is listed here."
            : "No audit event matches: clear a filter, or check its spelling (an action is like api_key.created)."
        }
      >
        {(items) => (
          <table>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Action</th>
                <th scope="col">Resource</th>
                <th scope="col">Actor</th>
                <th scope="col">Request</th>
              </tr>
            </thead>
            <tbody>
              {items.map((event) => (
                <tr key={event.id}>
                  <td>{when(event.created_at)}</td>
                  <td>{event.action}</td>
                  <td className="wrap">
                    {event.resource_type} {event.resource_id}
                  </td>
                  <td className="wrap">
                    {event.actor_kind} {event.actor_id}
                  </td>
                  <td className="wrap">{event.request_id ?? ""}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </PagedRows>
    </section>
  );
}
