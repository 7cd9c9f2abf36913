# The production image (docs/deploy.md): the esbuild bundle in dist/ on a production install of the
# dependencies, run as the unprivileged `node` user. CI checks the same steps without Docker:
# `npm run build`, then scripts/smokeBuild.ts starts `node dist/main.js serve`.
#   docker build -t tour-partner-service .
#   docker run --env-file prod.env -p 3000:3000 tour-partner-service
# Node.js in production: 22 LTS or 24 (docs/deploy.md, "Runtime"); the image uses 24.

# Build: every dependency (esbuild is a dev one), then the bundle.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY migrations ./migrations
COPY src ./src
RUN npm run build

# Runtime: production dependencies only (no tsx, no esbuild), the bundle and the API docs it serves.
FROM node:24-bookworm-slim AS runtime
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY docs/api ./docs/api
# HOST: listen on the container's interfaces (the default, 127.0.0.1, is unreachable from outside).
# DATA_DIR: writable by the service user (the code under /app is not). NODE_OPTIONS: the young
# generation the benchmarks were measured with (bench/README.md, garbage collection).
ENV HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/var/lib/tour-partner-service \
    NODE_OPTIONS=--max-semi-space-size=64
RUN mkdir -p "$DATA_DIR" && chown node:node "$DATA_DIR"
USER node
EXPOSE 3000
# /readyz answers 503 while the database is unreachable and from the start of a shutdown.
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/readyz`, { signal: AbortSignal.timeout(2500) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Docker sends SIGTERM on `docker stop`: give it more than SHUTDOWN_TIMEOUT (docker stop -t 35).
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js", "serve"]
