import type { ReactNode } from "react";
import { useEffect, useId, useRef } from "react";
import type { PagedList } from "./paged-list.js";

/** An environment's place in the API: every path below starts with it. */
export type EnvironmentPath = { organization_id: string; app_id: string; environment_id: string };

export const ENV = "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}";
/** How the empty states name the environment's endpoints (docs use `ENV/…` the same way). */
export const ENV_WORDS = "/v1/organizations/…/apps/…/environments/…";

/** Rows a list asks for at a time. */
export const PAGE = 50;

export const when = (iso: string) => new Date(iso).toLocaleString();

/** A choice among a list's values, or "any" (the empty value). */
export function Choice<S extends string>(props: {
  label: string;
  any: string;
  values: readonly S[];
  value: S | "";
  onChange: (value: S | "") => void;
}) {
  const id = useId();
  return (
    <div className="filter">
      <label htmlFor={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        onChange={(event) => props.onChange(props.values.find((value) => value === event.target.value) ?? "")}
      >
        <option value="">{props.any}</option>
        {props.values.map((value) => (
          <option key={value} value={value}>
            {value}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A status filter: "any status" or one of the list's statuses. */
export function StatusFilter<S extends string>(props: {
  label: string;
  statuses: readonly S[];
  value: S | "";
  onChange: (status: S | "") => void;
}) {
  return (
    <Choice
      label={props.label}
      any="Any status"
      values={props.statuses}
      value={props.value}
      onChange={props.onChange}
    />
  );
}

/** A text filter applied as it is typed (an id, an external id). */
export function TextFilter(props: { label: string; value: string; onChange: (value: string) => void }) {
  const id = useId();
  return (
    <div className="filter">
      <label htmlFor={id}>{props.label}</label>
      <input
        id={id}
        type="text"
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
      />
    </div>
  );
}

/** What went wrong, said once and announced. */
export function ErrorLine({ error }: { error: string | undefined }) {
  return error ? (
    <p role="alert" className="message error">
      {error}
    </p>
  ) : null;
}

/** The outcome of the last action, announced politely; always present so that it is announced. */
export function StatusLine({ message }: { message: string | undefined }) {
  return (
    <div role="status" aria-live="polite" className="message">
      {message ?? ""}
    </div>
  );
}

/**
 * A paged list's states in one place: loading, the error, the empty state (which says what to do
 * next), the rows, and the button for the next page.
 */
export function PagedRows<T>(props: {
  list: PagedList<T>;
  noun: string;
  empty: ReactNode;
  children: (items: T[]) => ReactNode;
}) {
  const { list } = props;
  return (
    <>
      <ErrorLine error={list.error} />
      {list.items === undefined && !list.error ? <p role="status">Loading the {props.noun}…</p> : null}
      {list.items?.length === 0 ? <p className="empty">{props.empty}</p> : null}
      {list.items && list.items.length > 0 ? props.children(list.items) : null}
      {list.items && list.hasMore ? (
        <button type="button" className="secondary" disabled={list.loadingMore} onClick={list.more}>
          Show more {props.noun}
        </button>
      ) : null}
    </>
  );
}

/** Copies a secret shown once; when the browser refuses, selects it for the person to copy. */
async function copySecret(secret: string, field: HTMLInputElement | null): Promise<string> {
  try {
    await navigator.clipboard.writeText(secret);
    return "Copied to the clipboard.";
  } catch {
    field?.select();
    return "The browser did not allow copying: the secret is selected, copy it yourself.";
  }
}

/** A secret the API shows in one answer only: selected at once, with a copy button. */
export function SecretOnce(props: { label: string; secret: string; onMessage: (message: string) => void }) {
  const id = useId();
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => field.current?.select(), []);
  return (
    <div className="secret">
      <label htmlFor={id}>{props.label}</label>
      <input ref={field} id={id} type="text" readOnly value={props.secret} />
      <div className="actions">
        <button
          type="button"
          onClick={async () => props.onMessage(await copySecret(props.secret, field.current))}
        >
          Copy the secret
        </button>
      </div>
    </div>
  );
}
