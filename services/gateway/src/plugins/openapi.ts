import { readFileSync } from "node:fs";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { SESSION_COOKIE } from "../admission/credentials.js";
import { eventWebhooks, registerEventSchemas } from "../events/webhooks.js";
import { GUIDES, GUIDES_PATH } from "../routes/guides.js";

/**
 * The document's `info.version`: the gateway package's version, which CHANGELOG.md's newest
 * release names (a test holds them together). Its major is the path's `/v1`; minors add what
 * docs/versioning.md allows within it.
 */
export const API_VERSION: string = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
).version;

/** The document's tags: one per plane (`route()` tags each operation with its plane's). */
export const TAGS = [
  {
    name: "auth",
    description: "Sign-up, log-in, sessions and password resets: how an operator gets a credential.",
  },
  {
    name: "control",
    description:
      "Organizations, members, apps and environments, API keys, quotas, subjects and the audit trail.",
  },
  {
    name: "platform",
    description: "Templates and bundles (the questionnaires and interviews), and continuous answers.",
  },
  {
    name: "interview",
    description:
      "Evaluations and their interviews: what a participant answers, what an agent drives, and the results.",
  },
  { name: "webhooks", description: "Endpoints that receive the platform's events, and their deliveries." },
  { name: "guides", description: "The guides to the API's behaviour, as markdown pages." },
];

/**
 * The document's description: what the API is, and a link to each guide (served by the gateway
 * itself, so the links work wherever `/docs` is read).
 */
export function apiDescription(publicUrl: string): string {
  const base = publicUrl.replace(/\/+$/, "");
  const guides = GUIDES.map(({ page, title }) => `- [${title}](${base}${GUIDES_PATH}/${page})`);
  return [
    "Structured evaluations (questionnaires and interviews) of an organization's subjects: " +
      "the control plane, the platform's templates and bundles, interviews, and webhooks.",
    "",
    "This document lists every operation and its fields. The guides say how the API behaves:",
    "",
    ...guides,
  ].join("\n");
}

/**
 * `/openapi.json` (OpenAPI 3.1), generated from the same route schemas that validate requests,
 * so the document cannot drift from behaviour; `/docs` renders it. Named schemas (`$id`) are
 * components, referred to by their names. `webhooks` is the event catalog (OpenAPI 3.1).
 */
export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "evalp API",
        version: API_VERSION,
        description: apiDescription(publicUrl),
        contact: { name: "evalp", url: publicUrl },
        license: { name: "Proprietary", identifier: "LicenseRef-evalp" },
      },
      servers: [{ url: publicUrl }],
      tags: TAGS,
      components: {
        securitySchemes: {
          bearer: {
            type: "http",
            scheme: "bearer",
            description: "An access token (log-in), an API key or a legacy key.",
          },
          apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "An API key." },
          session: {
            type: "apiKey",
            in: "cookie",
            name: SESSION_COOKIE,
            description: "The session cookie set at log-in.",
          },
          participantToken: {
            type: "http",
            scheme: "bearer",
            description:
              "A participant token, handed out when an evaluation session starts (`/v1/participant/*`).",
          },
          agentToken: {
            type: "http",
            scheme: "bearer",
            description: "An agent token, handed out when an agent session starts (`/v1/agent/*`).",
          },
        },
      },
      // The event catalog: what the platform POSTs to webhook endpoints (@fastify/swagger copies it as is).
      webhooks: eventWebhooks(),
    },
    // Components keep the names they were given.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}`,
    },
  });
  registerEventSchemas(app);
  await app.register(swaggerUi, { routePrefix: "/docs", uiConfig: { url: "/openapi.json" } });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
