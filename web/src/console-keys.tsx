import { type components, type EvalpClient, unwrap } from "@evalp/client";
import { type FormEvent, useCallback, useId, useState } from "react";
import { errorWords } from "./api.js";
import { ENV, type EnvironmentPath, PAGE, PagedRows, SecretOnce, StatusLine, when } from "./console-ui.js";
import { usePagedList } from "./paged-list.js";

type ApiKey = components["schemas"]["ApiKey"];

/** The scopes a backend usually needs, offered as checkboxes (docs/authentication.md). */
const SCOPES = [
  "org:read",
  "subjects:read",
  "subjects:write",
  "bundles:read",
  "evaluations:read",
  "evaluations:write",
  "webhooks:read",
  "webhooks:write",
  "analytics:read",
] as const;

/** The environment's API keys: create one (its secret shown once), list them, revoke one. */
export function ApiKeys(props: { client: EvalpClient; path: EnvironmentPath; environmentName: string }) {
  const { client, path } = props;
  const [secret, setSecret] = useState<string | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  // The key whose revocation waits for a second click.
  const [confirming, setConfirming] = useState<string | undefined>();
  const nameId = useId();

  const keys = usePagedList(
    useCallback(
      (cursor: string | null) =>
        unwrap(
          client.GET(`${ENV}/api-keys`, {
            params: { path, query: { limit: PAGE, ...(cursor ? { cursor } : {}) } },
          }),
        ),
      [client, path],
    ),
  );

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    // The element itself: React clears the event's currentTarget once the handler has returned.
    const element = event.currentTarget;
    const form = new FormData(element);
    const chosen = form.getAll("scope").map(String);
    const scopes = SCOPES.filter((scope) => chosen.includes(scope));
    setBusy(true);
    setMessage(undefined);
    try {
      const created = await unwrap(
        client.POST(`${ENV}/api-keys`, {
          params: { path },
          body: { name: String(form.get("name") ?? ""), scopes },
        }),
      );
      setSecret(created.secret);
      setMessage("The key was created. Copy it now: it is shown only this once.");
      element.reset();
      keys.reload();
    } catch (failure) {
      setMessage(
        errorWords(failure, {
          forbidden: "You may not create this key: a key's scopes must be among your own.",
        }),
      );
    } finally {
      setBusy(false);
    }
  }

  async function revoke(key: ApiKey) {
    setConfirming(undefined);
    setMessage(undefined);
    try {
      const revoked = await unwrap(
        client.POST(`${ENV}/api-keys/{key_id}/revoke`, { params: { path: { ...path, key_id: key.id } } }),
      );
      keys.update((items) => items.map((item) => (item.id === revoked.id ? revoked : item)));
      setMessage(`The key ${key.name} is revoked: calls with it now get 401.`);
    } catch (failure) {
      setMessage(errorWords(failure, { forbidden: "You may not revoke keys (keys:write)." }));
    }
  }

  return (
    <section aria-label={`API keys in ${props.environmentName}`} className="operations">
      <h4>API keys</h4>
      <form onSubmit={create} aria-label={`Create an API key in ${props.environmentName}`}>
        <label htmlFor={nameId}>Key name</label>
        <input id={nameId} name="name" type="text" required maxLength={100} />
        <fieldset>
          <legend>Scopes</legend>
          <div className="choices columns">
            {SCOPES.map((scope) => (
              <label key={scope} className="choice">
                <input type="checkbox" name="scope" value={scope} />
                {scope}
              </label>
            ))}
          </div>
        </fieldset>
        <div className="actions">
          <button type="submit" disabled={busy}>
            Create API key
          </button>
        </div>
      </form>
      {secret ? <SecretOnce key={secret} label="Secret" secret={secret} onMessage={setMessage} /> : null}
      <StatusLine message={message} />
      <PagedRows
        list={keys}
        noun="API keys"
        empty="No API key yet: create one above for your backend, with only the scopes it needs."
      >
        {(items) => (
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {items.map((key) => (
                <tr key={key.id} data-key={key.id}>
                  <th scope="row">{key.name}</th>
                  <td>
                    <code>{key.key_prefix}</code>
                  </td>
                  <td>{key.scopes.join(", ")}</td>
                  <td>{when(key.created_at)}</td>
                  <td className="row-actions">
                    {key.revoked_at ? (
                      `revoked ${when(key.revoked_at)}`
                    ) : confirming === key.id ? (
                      <span className="confirm">
                        <span>Revoke it for good?</span>
                        <button type="button" className="danger" onClick={() => revoke(key)}>
                          Yes, revoke {key.name}
                        </button>
                        <button type="button" className="secondary" onClick={() => setConfirming(undefined)}>
                          Keep it
                        </button>
                      </span>
                    ) : (
                      <button type="button" className="secondary" onClick={() => setConfirming(key.id)}>
                        Revoke {key.name}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </PagedRows>
    </section>
  );
}
