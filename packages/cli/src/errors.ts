import { EvalpApiError } from "@evalp/client";

/**
 * A failure the CLI reports on one stderr line, `error <code>: <message> (request <id>)`, and the
 * exit code it ends with: 1 for a refused or failed operation, 2 for a command used wrongly.
 */
export class CliError extends Error {
  readonly code: string;
  readonly requestId: string | undefined;
  readonly exitCode: 1 | 2;

  constructor(code: string, message: string, options: { requestId?: string; exitCode?: 1 | 2 } = {}) {
    super(message);
    this.name = "CliError";
    this.code = code;
    this.requestId = options.requestId;
    this.exitCode = options.exitCode ?? 1;
  }
}

/** A command used wrongly (a missing id, a malformed flag): exit code 2, as for commander's own. */
export function usageError(message: string): CliError {
  return new CliError("usage", message, { exitCode: 2 });
}

/** The one line a failure is shown as; never more, so that scripts can read stderr. */
export function errorLine(error: CliError): string {
  const request = error.requestId ? ` (request ${error.requestId})` : "";
  return `error ${error.code}: ${oneLine(error.message)}${request}`;
}

/** Any thrown value as a CliError: the API's refusal with its code, message and request id, else `internal`. */
export function asCliError(error: unknown): CliError {
  if (error instanceof CliError) return error;
  if (error instanceof EvalpApiError)
    return new CliError(error.code, error.message, error.requestId ? { requestId: error.requestId } : {});
  const message = error instanceof Error ? error.message : String(error);
  return new CliError("internal", message);
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, " ").trim();
}
