import { type components, type EvalpClient, unwrap } from "@evalp/client";
import { type FormEvent, useEffect, useId, useRef, useState } from "react";
import { errorWords } from "./api.js";
import { ENV, ENV_WORDS, type EnvironmentPath, ErrorLine, StatusLine, when } from "./console-ui.js";

type Subject = components["schemas"]["Subject"];
type Erasure = components["schemas"]["SubjectErasure"];

/** How often, and how many times, the page asks where an erasure stands before leaving it to a button. */
const ERASURE_POLL_MS = 1000;
const ERASURE_POLLS = 30;

/** Subjects: found by external id, then exported (a download) or erased (after typing its id). */
export function Subjects(props: { client: EvalpClient; path: EnvironmentPath; environmentName: string }) {
  const { client, path } = props;
  const [found, setFound] = useState<Subject | null | undefined>();
  const [looked, setLooked] = useState("");
  const [error, setError] = useState<string | undefined>();
  const id = useId();

  async function find(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const externalId = String(new FormData(event.currentTarget).get("external_id") ?? "").trim();
    setError(undefined);
    setFound(undefined);
    try {
      const page = await unwrap(
        client.GET(`${ENV}/subjects`, { params: { path, query: { external_id: externalId, limit: 1 } } }),
      );
      setLooked(externalId);
      setFound(page.items[0] ?? null);
    } catch (failure) {
      setError(errorWords(failure, {}));
    }
  }

  return (
    <section aria-label={`Subjects in ${props.environmentName}`} className="operations">
      <h4>Subjects</h4>
      <form onSubmit={find} aria-label={`Find a subject in ${props.environmentName}`}>
        <label htmlFor={id}>External id</label>
        <input id={id} name="external_id" type="text" required maxLength={255} />
        <div className="actions">
          <button type="submit">Find the subject</button>
        </div>
      </form>
      <ErrorLine error={error} />
      {found === null ? (
        <p className="empty">
          No subject has the external id “{looked}” here (an erased subject is not found either). Check the
          id, or import the subject with POST {ENV_WORDS}/subjects/batch.
        </p>
      ) : null}
      {found ? <SubjectCard key={found.id} client={client} path={path} subject={found} /> : null}
    </section>
  );
}

function SubjectCard(props: { client: EvalpClient; path: EnvironmentPath; subject: Subject }) {
  const { client, path, subject } = props;
  const subjectPath = { path: { ...path, subject_id: subject.id } };
  const [message, setMessage] = useState<string | undefined>();
  const [download, setDownload] = useState<string | undefined>();
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState("");
  const [erasure, setErasure] = useState<
    Erasure | { status: Erasure["status"]; requested_at: string } | undefined
  >();
  const link = useRef<HTMLAnchorElement>(null);
  const typedId = useId();
  const fileName = `subject-${subject.id}.json`;

  // An object URL holds the export in memory until it is revoked.
  useEffect(
    () => () => {
      if (download) URL.revokeObjectURL(download);
    },
    [download],
  );
  useEffect(() => {
    if (download) link.current?.click();
  }, [download]);

  async function exportData() {
    setMessage("Exporting…");
    try {
      const blob = await unwrap(
        client.GET(`${ENV}/subjects/{subject_id}/export`, { params: subjectPath, parseAs: "blob" }),
      );
      setDownload(URL.createObjectURL(blob));
      setMessage(`The export is downloaded as ${fileName}.`);
    } catch (failure) {
      setMessage(
        errorWords(failure, { subject_erased: "This subject is erased: there is nothing left to export." }),
      );
    }
  }

  async function poll(remaining: number) {
    try {
      const state = await unwrap(client.GET(`${ENV}/subjects/{subject_id}/erasure`, { params: subjectPath }));
      setErasure(state);
      if (state.status !== "completed" && remaining > 0) {
        setTimeout(() => void poll(remaining - 1), ERASURE_POLL_MS);
      }
    } catch (failure) {
      setMessage(errorWords(failure, {}));
    }
  }

  async function erase(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (typed !== subject.external_id) return;
    setMessage(undefined);
    try {
      const accepted = await unwrap(client.DELETE(`${ENV}/subjects/{subject_id}`, { params: subjectPath }));
      setConfirming(false);
      setErasure({ status: accepted.erasure.status, requested_at: accepted.erasure.requested_at });
      await poll(ERASURE_POLLS);
    } catch (failure) {
      setMessage(errorWords(failure, { forbidden: "You may not erase subjects (subjects:write)." }));
    }
  }

  return (
    <article className="card" aria-label={`Subject ${subject.external_id}`}>
      <dl className="facts">
        <dt>External id</dt>
        <dd>{subject.external_id}</dd>
        <dt>Id</dt>
        <dd>{subject.id}</dd>
        <dt>Created</dt>
        <dd>{when(subject.created_at)}</dd>
        <dt>Profile fields</dt>
        <dd>{Object.keys(subject.profile).join(", ") || "none"}</dd>
      </dl>
      {erasure ? (
        <p className="erasure" role="status">
          {erasure.status === "completed"
            ? `Erased: every plane has erased what it held about this subject${"completed_at" in erasure && erasure.completed_at ? ` (${when(erasure.completed_at)})` : ""}.`
            : "Erasure under way: the profile is gone; the interviews, events and deliveries follow."}
        </p>
      ) : (
        <>
          <div className="actions">
            <button type="button" className="secondary" onClick={exportData}>
              Export the subject's data
            </button>
            {download ? (
              <a ref={link} href={download} download={fileName}>
                Download the export again
              </a>
            ) : null}
            {confirming ? null : (
              <button type="button" className="danger" onClick={() => setConfirming(true)}>
                Erase the subject
              </button>
            )}
          </div>
          {confirming ? (
            <form onSubmit={erase} aria-label="Confirm the erasure" className="confirm-erase">
              <p>
                Erasing cannot be undone: the profile, interviews, transcripts, events and webhook payloads
                about this subject are deleted in every plane.
              </p>
              <label htmlFor={typedId}>Type the external id “{subject.external_id}” to confirm</label>
              <input
                id={typedId}
                type="text"
                value={typed}
                onChange={(event) => setTyped(event.target.value)}
              />
              <div className="actions">
                <button type="submit" className="danger" disabled={typed !== subject.external_id}>
                  Erase for good
                </button>
                <button type="button" className="secondary" onClick={() => setConfirming(false)}>
                  Keep the subject
                </button>
              </div>
            </form>
          ) : null}
        </>
      )}
      <StatusLine message={message} />
    </article>
  );
}
