import { type EvalpClient, unwrap } from "@evalp/client";
import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import { api, errorWords } from "./api.js";
import { Organization } from "./console-organization-page.js";
import { useFocusOnShow } from "./focus.js";

const LOGIN_ERRORS = {
  invalid_credentials: "The email or the password is wrong.",
  unauthenticated: "The email or the password is wrong.",
};

/**
 * `/console`: an operator logs in (the session cookie is set too; a reload that still has it
 * skips the form), then works in the active organization (docs/console.md).
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
      // A switch of organization starts its page afresh: nothing of the other one stays.
      key={session.organizationId}
      client={session.client}
      organizationId={session.organizationId}
      onSwitch={(organizationId) => setSession({ client: session.client, organizationId })}
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
  useFocusOnShow(() => email.current);

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
