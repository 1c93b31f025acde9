import { type FormEvent, useId, useRef, useState } from "react";
import { useFocusOnShow } from "./focus.js";

type Props = {
  title: string;
  intro: string;
  label: string;
  hint: string;
  submitLabel: string;
  /** Sends the password; resolves to what the page shows once it worked, throws words otherwise. */
  submit: (password: string) => Promise<string>;
};

/**
 * A one-field password form for a mailed link: the field has focus when the page opens, the
 * outcome (done or the API's refusal in words) is read out through an aria-live region.
 */
export function PasswordForm({ title, intro, label, hint, submitLabel, submit }: Props) {
  const field = useRef<HTMLInputElement>(null);
  const [password, setPassword] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState<string | undefined>();
  const inputId = useId();
  const hintId = useId();

  useFocusOnShow(() => field.current);

  async function onSubmit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      setDone(await submit(password));
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
      field.current?.focus();
    } finally {
      setBusy(false);
    }
  }

  return (
    <main>
      <h1>{title}</h1>
      {done === undefined ? (
        <form onSubmit={onSubmit} noValidate>
          <p>{intro}</p>
          <label htmlFor={inputId}>{label}</label>
          <input
            ref={field}
            id={inputId}
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={(event) => setPassword(event.target.value)}
            aria-describedby={hintId}
            aria-invalid={error !== undefined}
            required
          />
          <p id={hintId} className="hint">
            {hint}
          </p>
          <button type="submit" disabled={busy}>
            {busy ? "Sending…" : submitLabel}
          </button>
        </form>
      ) : null}
      <div role="status" aria-live="polite" className={error ? "message error" : "message"}>
        {error ?? done ?? ""}
      </div>
    </main>
  );
}
