import { type components, type EvalpClient, unwrap } from "@evalp/client";
import { useEffect, useId, useMemo, useState } from "react";
import { errorWords } from "./api.js";
import { Analytics } from "./console-analytics.js";
import { EvaluationPage, Evaluations } from "./console-evaluations.js";
import { ApiKeys } from "./console-keys.js";
import { AuditTrail, QuotaUsage } from "./console-organization.js";
import { Subjects } from "./console-subjects.js";
import { type EnvironmentPath, ErrorLine } from "./console-ui.js";
import { Deliveries, WebhookEndpoints } from "./console-webhooks.js";

type App = components["schemas"]["App"];
type Environment = components["schemas"]["Environment"];
type Listed = { app: App; environments: Environment[] };
type SessionOrganization = components["schemas"]["SessionOrganizations"]["items"][number];

/** What an environment shows, one at a time: a page per environment would be too long to read. */
const SECTIONS = ["Evaluations", "Webhooks", "API keys", "Subjects", "Analytics", "Quotas"] as const;
type Section = (typeof SECTIONS)[number];

/** The organization's two views: its apps and environments, or its audit trail. */
const VIEWS = ["Apps and environments", "Audit trail"] as const;

/** The active organization: its apps, each environment's operations, and its audit trail. */
export function Organization(props: {
  client: EvalpClient;
  organizationId: string;
  onSwitch: (organizationId: string) => void;
  onLogOut: () => void;
}) {
  const { client, organizationId } = props;
  const [apps, setApps] = useState<Listed[] | undefined>();
  const [name, setName] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [view, setView] = useState<(typeof VIEWS)[number]>("Apps and environments");
  // The evaluation whose page is open, if any, shown instead of the lists.
  const [opened, setOpened] = useState<{ path: EnvironmentPath; evaluationId: string } | undefined>();

  useEffect(() => {
    let live = true;
    const organization = { organization_id: organizationId };
    unwrap(client.GET("/v1/organizations/{organization_id}", { params: { path: organization } }))
      .then((read) => live && setName(read.name))
      .catch(() => undefined);
    (async () => {
      const listed: Listed[] = [];
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
      <OrganizationSwitcher
        client={client}
        organizationId={organizationId}
        name={name}
        onSwitch={props.onSwitch}
      />
      <nav aria-label="Console views" className="tabs">
        {VIEWS.map((one) => (
          <button
            key={one}
            type="button"
            className={one === view ? undefined : "secondary"}
            aria-pressed={one === view}
            onClick={() => setView(one)}
          >
            {one}
          </button>
        ))}
      </nav>
      <ErrorLine error={error} />
      {view === "Audit trail" ? <AuditTrail client={client} organizationId={organizationId} /> : null}
      {view === "Apps and environments" ? (
        <>
          {apps === undefined && !error ? <p role="status">Loading the organization's apps…</p> : null}
          {apps?.length === 0 ? (
            <p className="empty">
              This organization has no app yet: create one with POST /v1/organizations/{organizationId}/apps,
              then an environment in it.
            </p>
          ) : null}
          {apps?.map(({ app, environments }) => (
            <section key={app.id} aria-labelledby={`app-${app.id}`} className="card">
              <h2 id={`app-${app.id}`}>{app.name}</h2>
              <p className="muted">Slug {app.slug}</p>
              {environments.length === 0 ? (
                <p className="empty">
                  No environment yet: create one with POST …/apps/{app.id}/environments (for example
                  “Production”).
                </p>
              ) : null}
              {environments.map((environment) => (
                <EnvironmentPanel
                  key={environment.id}
                  client={client}
                  organizationId={organizationId}
                  appId={app.id}
                  environment={environment}
                  onOpenEvaluation={(path, evaluationId) => setOpened({ path, evaluationId })}
                />
              ))}
            </section>
          ))}
        </>
      ) : null}
    </main>
  );
}

/**
 * The active organization's name and, for a person in several, a choice of the others: switching
 * makes the chosen one the session's active organization (its scopes are the role's there).
 */
function OrganizationSwitcher(props: {
  client: EvalpClient;
  organizationId: string;
  name: string | undefined;
  onSwitch: (organizationId: string) => void;
}) {
  const { client, organizationId } = props;
  const [organizations, setOrganizations] = useState<SessionOrganization[]>([]);
  const [error, setError] = useState<string | undefined>();
  const id = useId();

  useEffect(() => {
    let live = true;
    unwrap(client.GET("/v1/session/organizations"))
      .then((listed) => live && setOrganizations(listed.items))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [client]);

  async function choose(chosen: string) {
    setError(undefined);
    try {
      const active = await unwrap(
        client.PUT("/v1/session/active-organization", { body: { organization_id: chosen } }),
      );
      props.onSwitch(active.organization_id);
    } catch (failure) {
      setError(errorWords(failure, { not_found: "You are no longer a member of that organization." }));
    }
  }

  if (organizations.length < 2) {
    return props.name ? <p className="muted">Organization {props.name}</p> : null;
  }
  return (
    <div className="filter switcher">
      <label htmlFor={id}>Organization</label>
      <select id={id} value={organizationId} onChange={(event) => void choose(event.target.value)}>
        {organizations.map((organization) => (
          <option key={organization.organization_id} value={organization.organization_id}>
            {organization.name} ({organization.role})
          </option>
        ))}
      </select>
      <ErrorLine error={error} />
    </div>
  );
}

function EnvironmentPanel(props: {
  client: EvalpClient;
  organizationId: string;
  appId: string;
  environment: Environment;
  onOpenEvaluation: (path: EnvironmentPath, evaluationId: string) => void;
}) {
  const { client, environment } = props;
  const [section, setSection] = useState<Section>("Evaluations");
  // Bumped when an endpoint's action makes deliveries (a test, a recovery): the list reloads.
  const [deliveriesChanged, setDeliveriesChanged] = useState(0);
  // One object per environment: the lists' queries depend on its identity.
  const path = useMemo(
    () => ({ organization_id: props.organizationId, app_id: props.appId, environment_id: environment.id }),
    [props.organizationId, props.appId, environment.id],
  );
  const named = { client, path, environmentName: environment.name };

  return (
    <section aria-labelledby={`env-${environment.id}`} className="environment">
      <h3 id={`env-${environment.id}`}>
        {environment.name} <span className="muted">({environment.slug})</span>
      </h3>
      <nav aria-label={`Sections of ${environment.name}`} className="tabs">
        {SECTIONS.map((one) => (
          <button
            key={one}
            type="button"
            className={one === section ? undefined : "secondary"}
            aria-pressed={one === section}
            onClick={() => setSection(one)}
          >
            {one}
          </button>
        ))}
      </nav>
      {section === "Evaluations" ? (
        <Evaluations {...named} onOpen={(evaluationId) => props.onOpenEvaluation(path, evaluationId)} />
      ) : null}
      {section === "Webhooks" ? (
        <>
          <WebhookEndpoints {...named} onTested={() => setDeliveriesChanged((count) => count + 1)} />
          <Deliveries {...named} refresh={deliveriesChanged} />
        </>
      ) : null}
      {section === "API keys" ? <ApiKeys {...named} /> : null}
      {section === "Subjects" ? <Subjects {...named} /> : null}
      {section === "Analytics" ? <Analytics {...named} /> : null}
      {section === "Quotas" ? <QuotaUsage {...named} /> : null}
    </section>
  );
}
