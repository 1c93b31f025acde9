import { type components, type EvalpClient, type paths, unwrap } from "@evalp/client";
import { type FormEvent, useCallback, useEffect, useId, useState } from "react";
import { errorWords } from "./api.js";
import {
  Choice,
  ENV,
  ENV_WORDS,
  type EnvironmentPath,
  ErrorLine,
  PAGE,
  PagedRows,
  SecretOnce,
  StatusFilter,
  StatusLine,
  when,
} from "./console-ui.js";
import { usePagedList } from "./paged-list.js";

type Endpoint = components["schemas"]["WebhookEndpoint"];
type Delivery = components["schemas"]["WebhookDelivery"];
type DeliveryWithAttempts = components["schemas"]["WebhookDeliveryWithAttempts"];
type EventType =
  paths[`${typeof ENV}/webhooks`]["post"]["requestBody"]["content"]["application/json"]["event_types"][number];

/** The event types of docs/webhooks.md; `*` is every one of them. */
const EVENT_TYPES = [
  "*",
  "subject.imported",
  "continuous_answer.recorded",
  "bundle.status_changed",
  "quota.updated",
  "membership.created",
  "invitation.accepted",
  "interview.started",
  "interview.completed",
  "interview.agent_requested",
  "evaluation.scored",
  "webhook.test",
] as const satisfies readonly EventType[];
type KnownEventType = (typeof EVENT_TYPES)[number];
const DELIVERED_TYPES = EVENT_TYPES.filter((type) => type !== "*");

const DELIVERY_STATUSES = ["pending", "succeeded", "failed", "dead_letter"] as const;
type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const WRITE_WORDS = { forbidden: "You may not change webhook endpoints (webhooks:write)." };

function chosenTypes(form: FormData): KnownEventType[] {
  const chosen = form.getAll("event_type").map(String);
  return EVENT_TYPES.filter((type) => chosen.includes(type));
}

/** The event types as checkboxes, those of `checked` ticked. */
function EventTypeChoices(props: { checked: readonly string[] }) {
  return (
    <fieldset>
      <legend>Event types</legend>
      <div className="choices columns">
        {EVENT_TYPES.map((type) => (
          <label key={type} className="choice">
            <input
              type="checkbox"
              name="event_type"
              value={type}
              defaultChecked={props.checked.includes(type)}
            />
            {type === "*" ? "* (every event)" : type}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

/**
 * The environment's webhook endpoints: create one (its signing secret shown once), change its
 * address, event types or state, send it a test event, rotate its secret, and recover its failed
 * deliveries (counted first, then re-queued).
 */
export function WebhookEndpoints(props: {
  client: EvalpClient;
  path: EnvironmentPath;
  environmentName: string;
  onTested: () => void;
}) {
  const { client, path } = props;
  const [message, setMessage] = useState<string | undefined>();
  const [secret, setSecret] = useState<{ endpoint: string; secret: string } | undefined>();
  const [editing, setEditing] = useState<string | undefined>();
  const [creating, setCreating] = useState(false);
  const urlId = useId();

  const endpoints = usePagedList(
    useCallback(
      (cursor: string | null) =>
        unwrap(
          client.GET(`${ENV}/webhooks`, {
            params: { path, query: { limit: PAGE, ...(cursor ? { cursor } : {}) } },
          }),
        ),
      [client, path],
    ),
  );

  const endpointPath = (endpoint: Endpoint) => ({ path: { ...path, id: endpoint.id } });
  const replace = (changed: Endpoint) =>
    endpoints.update((items) => items.map((item) => (item.id === changed.id ? changed : item)));

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const element = event.currentTarget;
    const form = new FormData(element);
    const eventTypes = chosenTypes(form);
    if (eventTypes.length === 0) {
      setMessage("Choose at least one event type (or * for every event).");
      return;
    }
    setCreating(true);
    setMessage(undefined);
    try {
      const created = await unwrap(
        client.POST(`${ENV}/webhooks`, {
          params: { path },
          body: { url: String(form.get("url") ?? ""), event_types: eventTypes },
        }),
      );
      setSecret(created.secret ? { endpoint: created.id, secret: created.secret } : undefined);
      setMessage("The endpoint was created. Copy its signing secret now: it is shown only this once.");
      element.reset();
      endpoints.reload();
    } catch (failure) {
      setMessage(
        errorWords(failure, {
          ...WRITE_WORDS,
          quota_exceeded: "The environment has as many endpoints as its quota allows: delete one first.",
        }),
      );
    } finally {
      setCreating(false);
    }
  }

  async function save(endpoint: Endpoint, event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const eventTypes = chosenTypes(form);
    if (eventTypes.length === 0) {
      setMessage("Choose at least one event type (or * for every event).");
      return;
    }
    try {
      const changed = await unwrap(
        client.PATCH(`${ENV}/webhooks/{id}`, {
          params: endpointPath(endpoint),
          body: {
            url: String(form.get("url") ?? ""),
            event_types: eventTypes,
            enabled: form.get("enabled") === "on",
          },
        }),
      );
      replace(changed);
      setEditing(undefined);
      setMessage(`The endpoint ${changed.url} is saved${changed.enabled ? "" : ", disabled"}.`);
    } catch (failure) {
      setMessage(errorWords(failure, WRITE_WORDS));
    }
  }

  async function test(endpoint: Endpoint) {
    setMessage(undefined);
    try {
      const delivery = await unwrap(
        client.POST(`${ENV}/webhooks/{id}/test`, { params: endpointPath(endpoint) }),
      );
      setMessage(`A test event was sent to ${endpoint.url}: its delivery is ${delivery.status}.`);
      props.onTested();
    } catch (failure) {
      setMessage(errorWords(failure, WRITE_WORDS));
    }
  }

  async function rotate(endpoint: Endpoint) {
    setMessage(undefined);
    try {
      const rotated = await unwrap(
        client.POST(`${ENV}/webhooks/{id}/rotate-secret`, { params: endpointPath(endpoint) }),
      );
      if (rotated.secret) setSecret({ endpoint: rotated.id, secret: rotated.secret });
      setMessage(
        "The secret is rotated. Copy the new one now; for 24 hours deliveries are signed with both, so your receiver can switch.",
      );
    } catch (failure) {
      setMessage(errorWords(failure, WRITE_WORDS));
    }
  }

  return (
    <section aria-label={`Webhook endpoints in ${props.environmentName}`} className="operations">
      <h4>Webhook endpoints</h4>
      <form onSubmit={create} aria-label={`Add a webhook endpoint in ${props.environmentName}`}>
        <label htmlFor={urlId}>Endpoint URL</label>
        <input id={urlId} name="url" type="url" required maxLength={2048} placeholder="https://" />
        <EventTypeChoices checked={[]} />
        <div className="actions">
          <button type="submit" disabled={creating}>
            Add the endpoint
          </button>
        </div>
      </form>
      {secret ? (
        <SecretOnce
          key={secret.secret}
          label="Signing secret"
          secret={secret.secret}
          onMessage={setMessage}
        />
      ) : null}
      <StatusLine message={message} />
      <PagedRows
        list={endpoints}
        noun="endpoints"
        empty="No webhook endpoint yet: add your receiver's HTTPS address above, then send it a test event."
      >
        {(items) => (
          <ul className="endpoints">
            {items.map((endpoint) => (
              <li key={endpoint.id} className="card" aria-label={`Endpoint ${endpoint.url}`}>
                <p>
                  <strong className="wrap">{endpoint.url}</strong>{" "}
                  <span className="muted">{endpoint.enabled ? "enabled" : "disabled"}</span>
                </p>
                <p className="muted">Events: {endpoint.event_types.join(", ")}</p>
                {editing === endpoint.id ? (
                  <form
                    onSubmit={(event) => save(endpoint, event)}
                    aria-label={`Edit the endpoint ${endpoint.url}`}
                  >
                    <label htmlFor={`url-${endpoint.id}`}>Endpoint URL</label>
                    <input
                      id={`url-${endpoint.id}`}
                      name="url"
                      type="url"
                      required
                      maxLength={2048}
                      defaultValue={endpoint.url}
                    />
                    <EventTypeChoices checked={endpoint.event_types} />
                    <label className="choice">
                      <input type="checkbox" name="enabled" defaultChecked={endpoint.enabled} />
                      Enabled (a disabled endpoint is sent nothing; its waiting deliveries are dead-lettered)
                    </label>
                    <div className="actions">
                      <button type="submit">Save the endpoint</button>
                      <button type="button" className="secondary" onClick={() => setEditing(undefined)}>
                        Cancel
                      </button>
                    </div>
                  </form>
                ) : (
                  <div className="actions">
                    <button type="button" className="secondary" onClick={() => setEditing(endpoint.id)}>
                      Edit
                    </button>
                    <button type="button" className="secondary" onClick={() => test(endpoint)}>
                      Send a test event
                    </button>
                    <button type="button" className="secondary" onClick={() => rotate(endpoint)}>
                      Rotate the secret
                    </button>
                  </div>
                )}
                <Recover client={client} path={path} endpoint={endpoint} onRecovered={props.onTested} />
              </li>
            ))}
          </ul>
        )}
      </PagedRows>
    </section>
  );
}

/** ISO date-time of `days` ago, for the recovery's `since`. */
const daysAgo = (days: number) => new Date(Date.now() - days * 24 * 60 * 60 * 1000).toISOString();

/** Recovering an endpoint's failed deliveries: counted first (dry run), re-queued once confirmed. */
function Recover(props: {
  client: EvalpClient;
  path: EnvironmentPath;
  endpoint: Endpoint;
  onRecovered: () => void;
}) {
  const { client, path, endpoint } = props;
  const [days, setDays] = useState("7");
  const [counted, setCounted] = useState<{ since: string; count: number } | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const id = useId();

  async function recover(since: string, dryRun: boolean) {
    setMessage(undefined);
    try {
      const answer = await unwrap(
        client.POST(`${ENV}/webhooks/{id}/recover`, {
          params: { path: { ...path, id: endpoint.id } },
          body: { since, dry_run: dryRun },
        }),
      );
      if (dryRun) {
        setCounted({ since, count: answer.count });
        setMessage(
          answer.count === 0
            ? "No failed or dead-lettered delivery to recover in that time."
            : `${answer.count} failed or dead-lettered deliveries would be sent again.`,
        );
      } else {
        setCounted(undefined);
        setMessage(`${answer.count} deliveries are pending again.`);
        props.onRecovered();
      }
    } catch (failure) {
      setMessage(errorWords(failure, WRITE_WORDS));
    }
  }

  return (
    <div className="recover">
      <div className="actions">
        <div className="filter">
          <label htmlFor={id}>Recover failed deliveries of the last (days)</label>
          <input
            id={id}
            type="number"
            min={1}
            max={90}
            value={days}
            onChange={(event) => {
              setDays(event.target.value);
              setCounted(undefined);
            }}
          />
        </div>
        <button type="button" className="secondary" onClick={() => recover(daysAgo(Number(days) || 1), true)}>
          Count what would be recovered
        </button>
        {counted && counted.count > 0 ? (
          <button type="button" onClick={() => recover(counted.since, false)}>
            Recover {counted.count} deliveries
          </button>
        ) : null}
      </div>
      <StatusLine message={message} />
    </div>
  );
}

/**
 * The environment's webhook deliveries, filtered by status and event type, each with a Replay
 * button and a detail with every attempt.
 */
export function Deliveries(props: {
  client: EvalpClient;
  path: EnvironmentPath;
  environmentName: string;
  /** Bumped by the endpoints' actions that make deliveries: the list loads again. */
  refresh: number;
}) {
  const { client, path, refresh } = props;
  const [status, setStatus] = useState<DeliveryStatus | "">("");
  const [eventType, setEventType] = useState<(typeof DELIVERED_TYPES)[number] | "">("");
  const [message, setMessage] = useState<string | undefined>();
  const [busy, setBusy] = useState<string | undefined>();
  const [opened, setOpened] = useState<string | undefined>();

  const deliveries = usePagedList(
    useCallback(
      (cursor: string | null) => {
        // Read so that a bump of `refresh` is a new query: the list starts over.
        void refresh;
        const query = {
          limit: PAGE,
          ...(status === "" ? {} : { status }),
          ...(eventType === "" ? {} : { event_type: eventType }),
          ...(cursor ? { cursor } : {}),
        };
        return unwrap(client.GET(`${ENV}/webhook-deliveries`, { params: { path, query } }));
      },
      [client, path, status, eventType, refresh],
    ),
  );

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
      deliveries.update((listed) => listed.map((item) => (item.id === replayed.id ? replayed : item)));
      setMessage(`Delivery ${replayed.id} replayed: it is ${replayed.status} now.`);
    } catch (failure) {
      setMessage(errorWords(failure, { forbidden: "You may not replay deliveries (webhooks:write)." }));
    } finally {
      setBusy(undefined);
    }
  }

  const filtered = status !== "" || eventType !== "";
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
        <Choice
          label="Event type"
          any="Any event type"
          values={DELIVERED_TYPES}
          value={eventType}
          onChange={setEventType}
        />
        <button type="button" className="secondary" onClick={deliveries.reload}>
          Refresh deliveries
        </button>
      </div>
      <PagedRows
        list={deliveries}
        noun="deliveries"
        empty={
          filtered
            ? `No ${status === "" ? "" : `${status} `}delivery${eventType === "" ? "" : ` of ${eventType}`}. Choose another status or event type, or any.`
            : `No deliveries yet: add an endpoint (above, or POST ${ENV_WORDS}/webhooks), then send it a test event.`
        }
      >
        {(items) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last error</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
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
                  <td className="row-actions">
                    <button
                      type="button"
                      disabled={busy === delivery.id}
                      aria-label={`Replay the ${delivery.event_type} delivery ${delivery.id}`}
                      onClick={() => replay(delivery)}
                    >
                      Replay
                    </button>
                    <button
                      type="button"
                      className="secondary"
                      aria-expanded={opened === delivery.id}
                      aria-label={`Attempts of the ${delivery.event_type} delivery ${delivery.id}`}
                      onClick={() => setOpened(opened === delivery.id ? undefined : delivery.id)}
                    >
                      Attempts
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </PagedRows>
      <StatusLine message={message} />
      {opened ? (
        <DeliveryDetail
          key={opened}
          client={client}
          path={path}
          deliveryId={opened}
          onClose={() => setOpened(undefined)}
        />
      ) : null}
    </section>
  );
}

/** One delivery with every attempt made: when, the receiver's status or the error, how long. */
function DeliveryDetail(props: {
  client: EvalpClient;
  path: EnvironmentPath;
  deliveryId: string;
  onClose: () => void;
}) {
  const { client, path, deliveryId } = props;
  const [delivery, setDelivery] = useState<DeliveryWithAttempts | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    unwrap(
      client.GET(`${ENV}/webhook-deliveries/{delivery_id}`, {
        params: { path: { ...path, delivery_id: deliveryId } },
      }),
    )
      .then((read) => live && setDelivery(read))
      .catch((failure) => live && setError(errorWords(failure, {})));
    return () => {
      live = false;
    };
  }, [client, path, deliveryId]);

  return (
    <section aria-label="Delivery detail" className="card">
      <div className="actions spread">
        <h5>Delivery {deliveryId}</h5>
        <button type="button" className="secondary" onClick={props.onClose}>
          Close the detail
        </button>
      </div>
      <ErrorLine error={error} />
      {delivery === undefined && !error ? <p role="status">Loading the delivery…</p> : null}
      {delivery ? (
        <>
          <dl className="facts">
            <dt>Event</dt>
            <dd>
              {delivery.event_type} ({delivery.event_id})
            </dd>
            <dt>Status</dt>
            <dd>{delivery.status}</dd>
            <dt>Next attempt</dt>
            <dd>{delivery.next_attempt_at ? when(delivery.next_attempt_at) : "none planned"}</dd>
            <dt>Delivered</dt>
            <dd>{delivery.delivered_at ? when(delivery.delivered_at) : "not yet"}</dd>
          </dl>
          {delivery.attempts.length === 0 ? (
            <p>
              Not attempted yet: the first attempt is due{" "}
              {delivery.next_attempt_at ? when(delivery.next_attempt_at) : "soon"}.
            </p>
          ) : (
            <table>
              <caption>Attempts</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Response</th>
                  <th scope="col">Error</th>
                  <th scope="col">Took</th>
                </tr>
              </thead>
              <tbody>
                {delivery.attempts.map((attempt) => (
                  <tr key={attempt.attempted_at}>
                    <td>{when(attempt.attempted_at)}</td>
                    <td>{attempt.response_status ?? "none"}</td>
                    <td>{attempt.error ?? ""}</td>
                    <td>{attempt.duration_ms} ms</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      ) : null}
    </section>
  );
}
