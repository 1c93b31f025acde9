import { type Schemas, unwrap } from "@evalp/client";
import { type Command, Option } from "commander";
import type { Context } from "../context.js";
import type { Output } from "../output.js";
import { pointInTime } from "../parse.js";
import { envPath } from "../paths.js";
import type { Act } from "../program.js";
import { type Column, fields } from "../table.js";
import { collect, limitOf, listLimit, pageSize } from "./list-options.js";

type Result = Schemas["EvaluationResult"];
type AxisLine = { axis: string; score: number | null; band: string | null };

const EVALUATION_COLUMNS: Column<Schemas["ListedEvaluation"]>[] = fields(
  "id",
  "subject_id",
  "bundle_id",
  "status",
  "created_at",
  "scored_at",
);
const AXIS_COLUMNS: Column<AxisLine>[] = fields("axis", "score", "band");
const EVALUATION_STATUSES = ["pending", "active", "paused", "completed", "ended_incomplete"] as const;

const EVALUATIONS =
  "/v1/organizations/{organization_id}/apps/{app_id}/environments/{environment_id}/evaluations";
const EVALUATION = `${EVALUATIONS}/{evaluation_id}` as const;

/** `evaluations`: the environment's evaluations and their verdicts (docs/results.md). */
export function registerEvaluationCommands(program: Command, act: Act): void {
  const evaluations = program
    .command("evaluations")
    .description("the environment's evaluations and their results");
  listLimit(
    evaluations.command("list").description("list evaluations, newest first, with when each was scored"),
  )
    .addOption(
      new Option("--status <status>", "only evaluations in this status").choices(EVALUATION_STATUSES),
    )
    .option("--subject <id>", "only this subject's")
    .option("--bundle <id>", "only those on this bundle")
    .option("--program <id>", "only this program's")
    .option("--since <when>", "created after (2026-11-25T10:00:00Z, or 24h, 7d back)", (value) =>
      pointInTime(value),
    )
    .option("--until <when>", "created before (a date-time, or a span back from now)", (value) =>
      pointInTime(value),
    )
    .action(
      act(async (context, _args, options) => {
        const limit = limitOf(options);
        const text = (name: string) =>
          typeof options[name] === "string" ? (options[name] as string) : undefined;
        const filters = {
          status: text("status") as (typeof EVALUATION_STATUSES)[number] | undefined,
          subject_id: text("subject"),
          bundle_id: text("bundle"),
          program_id: text("program"),
          created_after: text("since"),
          created_before: text("until"),
        };
        const query = {
          ...pageSize(limit),
          ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined)),
        };
        const items = context.api().paginate(EVALUATIONS, { params: { path: envPath(context), query } });
        context.output.list(await collect(items, limit), EVALUATION_COLUMNS);
      }),
    );
  evaluations
    .command("get")
    .description("show an evaluation and its status")
    .argument("<evaluation_id>", "the evaluation's id")
    .action(
      act(async (context, [id = ""]) => {
        const evaluation = await unwrap(context.api().GET(EVALUATION, evaluationParams(context, id)));
        context.output.item(evaluation, [
          "id",
          "subject_id",
          "bundle_id",
          "program_id",
          "status",
          "created_at",
        ]);
      }),
    );
  evaluations
    .command("result")
    .description(
      "show the evaluation's latest result: each axis's score and band (409 result_not_ready before)",
    )
    .argument("<evaluation_id>", "the evaluation's id")
    .option("--all", "every result, oldest first (the first scoring, then each rescore)")
    .action(
      act(async (context, [id = ""], options) => {
        const api = context.api();
        if (options.all === true) {
          const { items } = await unwrap(api.GET(`${EVALUATION}/results`, evaluationParams(context, id)));
          if (context.output.json) context.output.list(items, []);
          else for (const result of items) showResult(context.output, result);
          return;
        }
        showResult(
          context.output,
          await unwrap(api.GET(`${EVALUATION}/result`, evaluationParams(context, id))),
        );
      }),
    );
  evaluations
    .command("rescore")
    .description("score the evaluation's answers, context and signals again against another published bundle")
    .argument("<evaluation_id>", "the evaluation's id")
    .requiredOption("--bundle <id>", "a published bundle of the same app")
    .action(
      act(async (context, [id = ""], options) => {
        const body = { bundle_id: String(options.bundle) };
        const result = await unwrap(
          context.api().POST(`${EVALUATION}/rescore`, { ...evaluationParams(context, id), body }),
        );
        showResult(context.output, result);
      }),
    );
}

function evaluationParams(context: Context, id: string) {
  return { params: { path: { ...envPath(context), evaluation_id: id } } };
}

/** A result: its fields, then (for people) a table of its axes; in JSON the API's result itself. */
function showResult(output: Output, result: Result): void {
  output.item(result, ["evaluation_id", "bundle_id", "outcome", "scored_at", "fingerprint"]);
  if (output.json) return;
  output.list(
    result.report.axes.map((axis) => ({ axis: axis.axis, score: axis.score, band: axis.band_label })),
    AXIS_COLUMNS,
  );
}
