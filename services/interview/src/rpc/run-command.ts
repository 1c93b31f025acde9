import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { AppError, isErrorCode, outboxSavepoint, rollBackOutboxTo } from "@evalp/kit";
import {
  type RunCommandRequest,
  type RunCommandResponse,
  RunCommandResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import type { Command } from "../agent/command.js";
import { commandFingerprint } from "../agent/fingerprint.js";
import { HANDLERS } from "../agent/handlers.js";
import { runAgentStep } from "../agent/scope.js";
import { findCommand, type StoredCommand, storeCommand } from "../db/agent.js";
import { entryMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";
import { snapshotOfRow } from "../steps.js";

/**
 * One agent command (docs/interview.md#the-agent-protocol). The interview row is held FOR UPDATE, so commands of one
 * interview run one at a time. Its `id` has Idempotency-Key semantics scoped to the interview:
 * the first final answer (an ack, or an error below 500 (docs/errors.md)) is stored with the command's
 * fingerprint, and the same id again answers it verbatim; the same id with another command is
 * 422 `idempotency_key_reused`. A refused command is rolled back to a savepoint, so it changes
 * nothing but its stored error. `acked_at` - `received_at` feeds `api_latency_p95_ms`.
 */
export function runCommand(deps: Deps) {
  return async (req: RunCommandRequest): Promise<RunCommandResponse> => {
    const command = (req.command ?? {}) as unknown as Command;
    const handler = HANDLERS[command.type];
    if (!handler) throw new Error(`the gateway relayed an unknown command type ${command.type}`);
    const receivedAt = req.receivedAt ? timestampDate(req.receivedAt) : new Date();
    const fingerprint = commandFingerprint(command);
    let failure: AppError | null = null;
    const response = await runAgentStep(deps, req.agent, async (step) => {
      const { tx, interview } = step;
      const stored = await findCommand(tx, interview.id, command.id);
      if (stored) {
        if (stored.fingerprint !== fingerprint) {
          throw new AppError("idempotency_key_reused", "This command id was used for another command.", {
            id: command.id,
          });
        }
        if (stored.ack) return { ...fromBinary(RunCommandResponseSchema, stored.ack), replayed: true };
        const error = stored.error;
        if (error && isErrorCode(error.code)) {
          failure = new AppError(error.code, error.message, error.context);
          return null;
        }
      }
      const store = (ack: Uint8Array | null, error: StoredCommand["error"]) =>
        storeCommand(
          tx,
          { interviewId: interview.id, id: command.id, type: command.type, fingerprint, receivedAt },
          { ack, error },
        );
      // Events the handler wrote before it failed are rolled back with it: never published.
      const outboxMark = outboxSavepoint(tx);
      await tx.query("SAVEPOINT command");
      try {
        const entry = await handler(step, command);
        const answer = create(RunCommandResponseSchema, {
          entry: entry ? entryMessage(entry) : undefined,
          interview: snapshotOfRow(interview),
        });
        await store(toBinary(RunCommandResponseSchema, answer), null);
        return answer;
      } catch (error) {
        if (!(error instanceof AppError) || error.status >= 500) throw error;
        await tx.query("ROLLBACK TO SAVEPOINT command");
        rollBackOutboxTo(tx, outboxMark);
        await store(null, { code: error.code, message: error.message, context: error.context });
        failure = error;
        return null;
      }
    });
    if (failure) throw failure;
    if (!response) throw new Error("a command ended with neither an ack nor an error");
    return response;
  };
}
