import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";

/**
 * `/openapi.json` (OpenAPI 3.1), generated from the same route schemas that validate requests,
 * so the document cannot drift from behaviour; `/docs` renders it.
 */
export async function registerOpenApi(app: FastifyInstance, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "evalp API",
        version: "1.0.0",
        description: "Structured evaluations: control plane, platform, interviews and webhooks.",
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer", description: "Access token, API key or legacy key" },
          apiKey: { type: "apiKey", in: "header", name: "X-API-Key" },
          session: { type: "apiKey", in: "cookie", name: "evp_session" },
        },
      },
      security: [{ bearer: [] }, { apiKey: [] }, { session: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: "/docs", uiConfig: { url: "/openapi.json" } });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
}
