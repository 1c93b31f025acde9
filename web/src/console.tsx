import { type components, type EvalpClient, unwrap } from "@evalp/client";
import { type FormEvent, useEffect, useId, useMemo, useRef, useState } from "react";
import { api, errorWords } from "./api.js";
import { Deliveries, type EnvironmentPath, EvaluationPage, Evaluations } from "./console-operations.js";

type App = components["schemas"]["App"];
type Environment = components["schemas"]["Environment"];

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

const LOGIN_ERRORS = {
  invalid_credentials: "The email or the password is wrong.",
  unauthenticated: "The email or the password is wrong.",
};

/**
 * `/console`: an operator logs in (the session cookie is set too; a reload that still has it
 * skips the form), sees the organization's apps and environments, creates an API key, reads each
 * environment's evaluations (one's transcript and result) and replays its webhook deliveries.
 */
export function ConsolePage() {
  // undefined: not known yet; null: logged out; else the session (token or the cookie alone).
  const [session, setSession] = useState<
    { client: EvalpClient; organizationId: string } | null | undefined
  >();

  useEffect(() => {
    const client = api();
    unwrap(client.GET("/v1/session/active-organization"))
      .then((active) => setSession({ client, organizationId: active.organization_id }))
      .catch(() => setSession(null));
  }, []);

  if (session === undefined) {
    return (
      <main>
        <h1>Console</h1>
        <p role="status">Loading…</p>
      </main>
    );
  }
  if (session === null) return <LogIn onSession={setSession} />;
  return (
    <Organization
      client={session.client}
      organizationId={session.organizationId}
      onLogOut={async () => {
        await session.client.POST("/auth/logout");
        setSession(null);
      }}
    />
  );
}

function LogIn({
  onSession,
}: {
  onSession: (session: { client: EvalpClient; organizationId: string }) => void;
}) {
  const email = useRef<HTMLInputElement>(null);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const ids = { email: useId(), password: useId() };
  useEffect(() => email.current?.focus(), []);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(undefined);
    try {
      const body = { email: String(form.get("email") ?? ""), password: String(form.get("password") ?? "") };
      const login = await unwrap(api().POST("/auth/login", { body }));
      const client = api(login.access_token);
      const active = await unwrap(client.GET("/v1/session/active-organization"));
      onSession({ client, organizationId: active.organization_id });
    } catch (failure) {
      setError(errorWords(failure, LOGIN_ERRORS));
      email.current?.focus();
    } finally {
      setBusy(false);
    }
  }

  return (
    <main>
      <h1>Log in to the console</h1>
      <form onSubmit={onSubmit}>
        <label htmlFor={ids.email}>Email</label>
        <input ref={email} id={ids.email} name="email" type="email" autoComplete="username" required />
        <label htmlFor={ids.password}>Password</label>
        <input id={ids.password} name="password" type="password" autoComplete="current-password" required />
        <div className="actions">
          <button type="submit" disabled={busy}>
            {busy ? "Logging in…" : "Log in"}
          </button>
        </div>
      </form>
      <div role="status" aria-live="polite" className="message error">
        {error ?? ""}
      </div>
    </main>
  );
}

type Listed = { app: App; environments: Environment[] };

function Organization(props: { client: EvalpClient; organizationId: string; onLogOut: () => void }) {
  const { client, organizationId } = props;
  const [apps, setApps] = useState<Listed[] | undefined>();
  const [error, setError] = useState<string | undefined>();
  // The evaluation whose page is open, if any: the organization's lists stay loaded behind it.
  const [opened, setOpened] = useState<{ path: EnvironmentPath; evaluationId: string } | undefined>();

  useEffect(() => {
    let live = true;
    (async () => {
      const listed: Listed[] = [];
      const organization = { organization_id: organizationId };
      for await (const app of client.paginate("/v1/organizations/{organization_id}/apps", {
        params: { path: organization },
      })) {
        const environments: Environment[] = [];
        for await (const environment of client.paginate(
          "/v1/organizations/{organization_id}/apps/{app_id}/environments",
          { params: { path: { ...organization, app_id: app.id } } },
        )) {
          environments.push(environment);
        }
        listed.push({ app, environments });
      }
      if (live) setApps(listed);
    })().catch((failure) => live && setError(errorWords(failure, {})));
    return () => {
      live = false;
    };
  }, [client, organizationId]);

  if (opened) {
    return (
      <EvaluationPage
        client={client}
        path={opened.path}
        evaluationId={opened.evaluationId}
        onBack={() => setOpened(undefined)}
      />
    );
  }

  return (
    <main className="wide">
      <div className="actions spread">
        <h1>Console</h1>
        <button type="button" className="secondary" onClick={props.onLogOut}>
          Log out
        </button>
      </div>
      {error ? (
        <p role="alert" className="message error">
          {error}
        </p>
      ) : null}
      {apps === undefined && !error ? <p role="status">Loading the organization's apps…</p> : null}
      {apps?.length === 0 ? <p>This organization has no app yet.</p> : null}
      {apps?.map(({ app, environments }) => (
        <section key={app.id} aria-labelledby={`app-${app.id}`} className="card">
          <h2 id={`app-${app.id}`}>{app.name}</h2>
          <p className="muted">Slug {app.slug}</p>
          {environments.length === 0 ? <p>No environment yet.</p> : null}
          {environments.map((environment) => (
            <EnvironmentPanel
              key={environment.id}
              client={client}
              path={{ organization_id: organizationId, app_id: app.id, environment_id: environment.id }}
              environment={environment}
              onOpenEvaluation={(path, evaluationId) => setOpened({ path, evaluationId })}
            />
          ))}
        </section>
      ))}
    </main>
  );
}

function EnvironmentPanel(props: {
  client: EvalpClient;
  path: EnvironmentPath;
  environment: Environment;
  onOpenEvaluation: (path: EnvironmentPath, evaluationId: string) => void;
}) {
  const { client, path, environment } = props;
  const [secret, setSecret] = useState<string | undefined>();
  const [message, setMessage] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const secretField = useRef<HTMLInputElement>(null);
  const ids = useMemo(
    () => ({ name: `key-name-${environment.id}`, secret: `key-secret-${environment.id}` }),
    [environment.id],
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
        client.POST(
          "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/api-keys",
          {
            params: { path },
            body: { name: String(form.get("name") ?? ""), scopes },
          },
        ),
      );
      setSecret(created.secret);
      setMessage("The key was created. Copy it now: it is shown only this once.");
      element.reset();
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

  useEffect(() => {
    if (secret) secretField.current?.select();
  }, [secret]);

  async function copy() {
    if (!secret) return;
    try {
      await navigator.clipboard.writeText(secret);
      setMessage("Copied to the clipboard.");
    } catch {
      secretField.current?.select();
      setMessage("The browser did not allow copying: the key is selected, copy it yourself.");
    }
  }

  return (
    <section aria-labelledby={`env-${environment.id}`} className="environment">
      <h3 id={`env-${environment.id}`}>
        {environment.name} <span className="muted">({environment.slug})</span>
      </h3>
      <form onSubmit={create} aria-label={`Create an API key in ${environment.name}`}>
        <label htmlFor={ids.name}>Key name</label>
        <input id={ids.name} name="name" type="text" required maxLength={100} />
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
      {secret ? (
        <div className="secret">
          <label htmlFor={ids.secret}>Secret</label>
          <input ref={secretField} id={ids.secret} type="text" readOnly value={secret} />
          <div className="actions">
            <button type="button" onClick={copy}>
              Copy the secret
            </button>
          </div>
        </div>
      ) : null}
      <div role="status" aria-live="polite" className="message">
        {message ?? ""}
      </div>
      <Evaluations
        client={client}
        path={path}
        environmentName={environment.name}
        onOpen={(evaluationId) => props.onOpenEvaluation(path, evaluationId)}
      />
      <Deliveries client={client} path={path} environmentName={environment.name} />
    </section>
  );
}
