import { type Plane, type Prose, plane } from "../route.js";

/** The platform plane's operations, by operationId: each is one route of the plane. */
export type PlatformOperationId =
  | "createTemplate"
  | "getTemplate"
  | "addTemplateDefinition"
  | "cloneTemplate"
  | "createBundle"
  | "listBundles"
  | "getBundle"
  | "changeBundleStatus"
  | "previewBundle"
  | "recordContinuousAnswer";

/**
 * What `/openapi.json` says of each of the platform plane's operations: its summary, its
 * description and what each success status means. The routes beside this file declare the rest;
 * the compiler holds the two together (an operation without its prose, or prose without its
 * operation, does not build).
 */
export const PLATFORM_PROSE = {
  createTemplate: {
    summary: "Create a template",
    description:
      "Creates a template with its first definitions (1 to 50), each at revision 1. Only each content's `kind` is checked here; two definitions may not share (business_id, locale). `content_hash` is `sha256:` and the hex SHA-256 of the content's canonical JSON. Requires `templates:write` and an Idempotency-Key.",
    responses: { 201: "The template, created, with its definitions." },
  },
  getTemplate: {
    summary: "Get a template",
    description:
      "A template of the app with every revision of its definitions. Requires `bundles:read` or `templates:write`.",
    responses: { 200: "The template." },
  },
  addTemplateDefinition: {
    summary: "Add a definition revision",
    description:
      "Adds a definition to the template: the next revision of its (business_id, locale), or revision 1 of a new one. Only the content's `kind` is checked here. Requires `templates:write` and an Idempotency-Key.",
    responses: { 201: "The definition revision, created." },
  },
  cloneTemplate: {
    summary: "Clone a template",
    description:
      "Copies the latest revision of every (business_id, locale) of the template into a new template: new ids, `business_id` prefixed with `business_id_prefix` and a dot, revision 1, the same content and hash, unpublished. Requires `templates:write` and an Idempotency-Key.",
    responses: { 201: "The new template's id and its definitions." },
  },
  createBundle: {
    summary: "Create a bundle",
    description:
      "Creates a `draft` bundle of six component versions: each `*_version_id` is a definition revision of this app whose content's kind fits the field (422 `component_kind_mismatch` otherwise; 404 with `context.field` for one of another app). `revision` counts the app's bundles of that name; `fingerprint` hashes the six content hashes. Requires `bundles:write` and an Idempotency-Key.",
    responses: { 201: "The bundle, created as a draft." },
  },
  listBundles: {
    summary: "List bundles",
    description:
      "The app's bundles, newest first, a page at a time (docs/paging.md), optionally only those of one `status`. Requires `bundles:read`.",
    responses: { 200: "A page of bundles." },
  },
  getBundle: {
    summary: "Get a bundle",
    description: "One bundle of the app, with its status. Requires `bundles:read`.",
    responses: { 200: "The bundle." },
  },
  changeBundleStatus: {
    summary: "Change a bundle's status",
    description:
      "Moves the bundle to `status`. Allowed moves: draft → validated or archived; validated → published, draft or archived; published → deprecated; deprecated → published or archived. Any other (the same status included) is 409 `invalid_transition`. Entering `validated` checks the six contents and compiles every expression (422 `bundle_invalid`); the first publish sets `published_at`. Emits `bundle.status_changed` in every environment of the app. Requires `bundles:write` and an Idempotency-Key.",
    responses: { 200: "The bundle in its new status." },
  },
  previewBundle: {
    summary: "Preview a bundle",
    description:
      "Runs the bundle's scorecard against sample `answers`, `context` and `signals` and answers its report and trace; writes nothing. Not for an `archived` bundle (409 `invalid_transition`); a malformed expression, or a scorecard over 100 axes or 20,000 nodes, is 422 `expression_invalid`. `answers`, `context` and `signals` may take 256 KiB of JSON together by default (`PREVIEW_INPUT_LIMIT_BYTES`; 413 `payload_too_large` with `context.limit` and `context.size` beyond). The trace holds at most 1 MiB: values over 1 KiB are replaced by `value_omitted`, and steps past the budget are left out (`truncated`, `omitted_steps`); the report is complete. Requires `bundles:read`; an Idempotency-Key is honoured but not needed.",
    responses: { 200: "The preview's report and trace." },
  },
  recordContinuousAnswer: {
    summary: "Record a continuous answer",
    description:
      "Records a subject's answer to a program's question outside an interview (201) and emits `continuous_answer.recorded`. The same (subject_id, program_id, client_answer_id) again, whatever its Idempotency-Key, answers 200 with the first receipt and `idempotent_replay` true when `answer` is equal, 409 `client_answer_conflict` when it is not. An unknown subject, program or delivery is 404. Requires `continuous:write` and an Idempotency-Key.",
    responses: {
      200: "The receipt of the answer recorded first: this one repeats it.",
      201: "The answer, recorded.",
    },
  },
} satisfies Record<PlatformOperationId, Prose>;

/** The platform plane's tag, and its operations' prose (above). */
export const PLATFORM: Plane<PlatformOperationId> = plane("platform", PLATFORM_PROSE);
