# syntax=docker/dockerfile:1
#
# One small, non-root image per process of the platform, all from this file:
#
#   docker build --build-arg SERVICE=gateway   -t registry.example.com/evalp/gateway:0.1.0 .
#   docker build --build-arg SERVICE=control   -t registry.example.com/evalp/control:0.1.0 .
#   … platform, interview, webhooks alike …
#   docker build --target migrate              -t registry.example.com/evalp/migrate:0.1.0 .
#
# A service image holds the production dependencies of that service only (`npm ci --omit=dev
# --workspace services/<name>`), the compiled `dist/` of the shared packages and of that service,
# the guides of `docs/` and the built web app `web/dist` (the gateway serves them), and runs
# `node services/<name>/dist/main.js` under tini as uid 1000. The `migrate` image holds
# every service's migrations and runs `node scripts/migrate.mjs`; Kubernetes runs it as the init
# container of each Deployment that uses Postgres (deploy/k8s/README.md).
#
# The build stage (`npm ci` with dev dependencies, `npm run build`, which generates the protobuf
# code with buf from its npm package) does not depend on SERVICE, so building the six images
# builds the code once. No HEALTHCHECK: Kubernetes probes /healthz and /readyz itself.

# Node 26 as in CI (.node-version, package.json engines). Pin by digest in your registry mirror
# for reproducible builds: NODE_IMAGE=node:26.10.0-trixie-slim@sha256:…
ARG NODE_IMAGE=node:26.10.0-trixie-slim

FROM ${NODE_IMAGE} AS base
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false \
    TURBO_TELEMETRY_DISABLED=1
WORKDIR /app

# Every workspace's package.json and the lock file, and nothing else: the dependency layers
# below are then rebuilt only when a manifest changes, not on every source edit.
FROM base AS manifests
COPY . /src
RUN mkdir /manifests \
 && cd /src \
 && find . -name node_modules -prune -o -name package.json -print | xargs cp --parents -t /manifests \
 && cp package-lock.json /manifests/

# Compiles every workspace, then gathers what runs: each workspace's package.json, dist/ and
# migrations/ (the SQL files are read at run time) under /out, without sources or node_modules.
FROM base AS build
COPY --from=manifests /manifests/ ./
RUN npm ci
COPY . .
RUN npm run build \
 && for dir in packages/* services/* web; do \
      [ -f "$dir/package.json" ] || continue; \
      mkdir -p "/out/$dir"; \
      cp "$dir/package.json" "/out/$dir/"; \
      if [ -d "$dir/dist" ]; then cp -R "$dir/dist" "/out/$dir/"; fi; \
      if [ -d "$dir/migrations" ]; then cp -R "$dir/migrations" "/out/$dir/"; fi; \
    done

# Production dependencies of one service (with the workspace packages it uses, linked).
FROM base AS service-deps
ARG SERVICE
RUN case "${SERVICE}" in \
      gateway|control|platform|interview|webhooks) ;; \
      *) echo "build with --build-arg SERVICE=gateway|control|platform|interview|webhooks (got '${SERVICE}')" >&2; exit 1 ;; \
    esac
COPY --from=manifests /manifests/ ./
RUN npm ci --omit=dev --workspace "services/${SERVICE}"

# Production dependencies of every service that owns a schema: scripts/migrate.mjs imports their
# migration sets.
FROM base AS migrate-deps
COPY --from=manifests /manifests/ ./
RUN npm ci --omit=dev \
      --workspace services/control --workspace services/platform \
      --workspace services/interview --workspace services/webhooks

# What every runtime image shares: tini as PID 1 (it forwards SIGTERM to node, which drains and
# exits 0, and reaps zombies), production settings, and a non-root numeric user so that
# Kubernetes' runAsNonRoot can verify it. The application files stay owned by root, read-only to
# the process; VAR_DIR and MAIL_DIR point under /tmp, which Kubernetes mounts as an emptyDir.
FROM base AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    VAR_DIR=/tmp/evalp \
    MAIL_DIR=/tmp/evalp/mail
ENTRYPOINT ["/usr/bin/tini", "--"]

FROM runtime AS migrate
COPY --from=migrate-deps /app/ ./
COPY --from=build /out/packages/ ./packages/
COPY --from=build /out/services/control/ ./services/control/
COPY --from=build /out/services/platform/ ./services/platform/
COPY --from=build /out/services/interview/ ./services/interview/
COPY --from=build /out/services/webhooks/ ./services/webhooks/
COPY scripts/migrate.mjs ./scripts/
USER 1000:1000
CMD ["node", "scripts/migrate.mjs"]

# The default target: one service, chosen by SERVICE.
FROM runtime AS service
ARG SERVICE
COPY --from=service-deps /app/ ./
COPY --from=build /out/packages/ ./packages/
COPY --from=build /out/services/${SERVICE}/ ./services/${SERVICE}/
# The guides (docs/): the gateway serves them read-only at /docs/guides/<page>.
COPY docs/ ./docs/
# The built web app: the gateway serves its pages (docs/pages.md).
COPY --from=build /out/web/dist/ ./web/dist/
# One entry point whatever the service; node resolves the link, so imports stay relative to
# services/<name>/dist.
RUN ln -s "services/${SERVICE}/dist/main.js" main.js \
 && test -f "services/${SERVICE}/dist/main.js"
ENV EVALP_SERVICE=${SERVICE}
USER 1000:1000
CMD ["node", "main.js"]
