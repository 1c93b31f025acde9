import { type Schemas, unwrap } from "@evalp/client";
import type { Command } from "commander";
import type { Context } from "../context.js";
import { envPath } from "../paths.js";
import type { Act } from "../program.js";
import { type Column, fields } from "../table.js";
import { collect, limitOf, listLimit, pageSize } from "./list-options.js";

const SUBJECTS = "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/subjects";
const SUBJECT = `${SUBJECTS}/{subject_id}` as const;

const SUBJECT_COLUMNS: Column<Schemas["Subject"]>[] = fields(
  "id",
  "external_id",
  "identity_mode",
  "created_at",
);

/** `subjects list|get|export|erase|erasure` (docs/subjects.md). */
export function registerSubjectCommands(program: Command, act: Act): void {
  const subjects = program.command("subjects").description("the environment's subjects: read, export, erase");
  listLimit(
    subjects
      .command("list")
      .description("list the environment's subjects (erased ones are not listed)")
      .option("--external-id <id>", "only the subject with this external id"),
  ).action(
    act(async (context, _args, options) => {
      const limit = limitOf(options);
      const externalId = typeof options.externalId === "string" ? { external_id: options.externalId } : {};
      const items = context.api().paginate(SUBJECTS, {
        params: { path: envPath(context), query: { ...pageSize(limit), ...externalId } },
      });
      context.output.list(await collect(items, limit), SUBJECT_COLUMNS);
    }),
  );
  subjects
    .command("get")
    .description("show a subject with its profile")
    .argument("<subject_id>", "the subject's id")
    .action(
      act(async (context, [subjectId = ""]) => {
        const subject = await unwrap(
          context.api().GET(SUBJECT, { params: { path: subjectPath(context, subjectId) } }),
        );
        context.output.item(subject, [
          "id",
          "external_id",
          "identity_mode",
          "profile",
          "created_at",
          "updated_at",
        ]);
      }),
    );
  subjects
    .command("export")
    .description("write everything the platform keeps about a subject, one JSON document, to stdout")
    .argument("<subject_id>", "the subject's id")
    .action(
      act(async (context, [subjectId = ""]) => {
        // Streamed through as it arrives: a large export is never held whole.
        const body = await unwrap(
          context.api().GET(`${SUBJECT}/export`, {
            params: { path: subjectPath(context, subjectId) },
            parseAs: "stream",
          }),
        );
        if (!body) return;
        const decoder = new TextDecoder();
        for await (const chunk of body)
          context.runtime.streams.stdout(decoder.decode(chunk, { stream: true }));
        context.runtime.streams.stdout(`${decoder.decode()}\n`);
      }),
    );
  subjects
    .command("erase")
    .description("erase a subject from every plane; this cannot be undone")
    .argument("<subject_id>", "the subject's id")
    .action(
      act(async (context, [subjectId = ""]) => {
        const accepted = await unwrap(
          context.api().DELETE(SUBJECT, { params: { path: subjectPath(context, subjectId) } }),
        );
        context.output.item(accepted, ["subject_id", "erasure"]);
        context.output.note(`Follow it with: evalp subjects erasure ${accepted.subject_id}`);
      }),
    );
  subjects
    .command("erasure")
    .description("show where a subject's erasure stands, plane by plane")
    .argument("<subject_id>", "the subject's id")
    .action(
      act(async (context, [subjectId = ""]) => {
        const state = await unwrap(
          context.api().GET(`${SUBJECT}/erasure`, { params: { path: subjectPath(context, subjectId) } }),
        );
        context.output.item(state, ["subject_id", "status", "requested_at", "completed_at", "planes"]);
      }),
    );
}

function subjectPath(context: Context, subjectId: string) {
  return { ...envPath(context), subject_id: subjectId };
}
