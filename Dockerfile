# syntax=docker/dockerfile:1
# Production images, one target per process:
#   docker build --target hub|workflow-agent|netbox-agent|satellite|simulator -t fleet/<target> .
# The build stage installs from the lockfile and runs `pnpm build`; each image then holds its package's dist/ (run
# with plain node, no tsx) and only that package's production node modules (`pnpm deploy --prod`), in the repository's
# layout under /opt/fleet (the hub's bundle finds migrations/ and apps/web/dist above it), as user fleet (10001).
# The config is read from FLEET_CONFIG (/etc/fleet/<process>.json: mount it) or `--config` after the image's command.
# The hub image also carries the migrate CLI: `docker run --rm fleet/hub node apps/hub/dist/migrate-cli.js`.
# docs/deployment.md ("Production build"); test/dockerfile.test.ts checks each target.

FROM node:20-bookworm-slim AS build
WORKDIR /src
RUN npm install --global --no-audit --no-fund --loglevel=error pnpm@10.34.9
COPY . .
RUN pnpm install --frozen-lockfile && pnpm build
# Workspace packages are compiled into the bundles; each process needs only its own package's npm dependencies.
RUN for pkg in hub workflow-agent netbox-agent satellite simulators; do \
      pnpm --config.inject-workspace-packages=true --filter "@fleet/$pkg" deploy --prod "/deploy/$pkg" && \
      rm -rf "/deploy/$pkg/src" "/deploy/$pkg/test" || exit 1; \
    done

FROM node:20-bookworm-slim AS runtime
RUN groupadd --system --gid 10001 fleet && \
    useradd --system --uid 10001 --gid fleet --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin fleet
ENV NODE_ENV=production
WORKDIR /opt/fleet
COPY --from=build /src/deploy/docker/healthcheck.mjs deploy/docker/healthcheck.mjs

FROM runtime AS hub
COPY --from=build /deploy/hub apps/hub
COPY --from=build /src/migrations migrations
COPY --from=build /src/apps/web/dist apps/web/dist
RUN install -d -o fleet -g fleet /var/lib/fleet/blobs
USER fleet
ENV FLEET_CONFIG=/etc/fleet/hub.json
EXPOSE 8080 9464
HEALTHCHECK --interval=15s --timeout=6s --start-period=30s --retries=3 \
  CMD ["node", "deploy/docker/healthcheck.mjs", "hub"]
CMD ["node", "--initial-heap-size=64", "--enable-source-maps", "apps/hub/dist/main.js"]

FROM runtime AS workflow-agent
COPY --from=build /deploy/workflow-agent apps/workflow-agent
USER fleet
ENV FLEET_CONFIG=/etc/fleet/workflow-agent.json
EXPOSE 9465
HEALTHCHECK --interval=15s --timeout=6s --start-period=30s --retries=3 \
  CMD ["node", "deploy/docker/healthcheck.mjs", "workflow-agent"]
CMD ["node", "--initial-heap-size=64", "--enable-source-maps", "apps/workflow-agent/dist/main.js"]

FROM runtime AS netbox-agent
COPY --from=build /deploy/netbox-agent apps/netbox-agent
USER fleet
ENV FLEET_CONFIG=/etc/fleet/netbox-agent.json
EXPOSE 9467
HEALTHCHECK --interval=15s --timeout=6s --start-period=30s --retries=3 \
  CMD ["node", "deploy/docker/healthcheck.mjs", "netbox-agent"]
CMD ["node", "--initial-heap-size=64", "--enable-source-maps", "apps/netbox-agent/dist/main.js"]

# The satellite loads the workflow bundle `pnpm build` wrote beside it (apps/satellite/dist/workflow-bundle.js).
FROM runtime AS satellite
COPY --from=build /deploy/satellite apps/satellite
# Named volumes mounted on these start with the image's owner: the satellite (user fleet) writes all three.
RUN install -d -o fleet -g fleet /var/cache/fleet/artifacts /var/lib/fleet/satellite /var/lib/fleet/secrets
USER fleet
ENV FLEET_CONFIG=/etc/fleet/satellite.json
EXPOSE 9466
HEALTHCHECK --interval=15s --timeout=6s --start-period=60s --retries=3 \
  CMD ["node", "deploy/docker/healthcheck.mjs", "satellite"]
CMD ["node", "--initial-heap-size=64", "--enable-source-maps", "apps/satellite/dist/main.js"]

FROM runtime AS simulator
COPY --from=build /deploy/simulators packages/simulators
USER fleet
ENV FLEET_CONFIG=/etc/fleet/simulator.json
EXPOSE 8090
HEALTHCHECK --interval=15s --timeout=6s --start-period=30s --retries=3 \
  CMD ["node", "deploy/docker/healthcheck.mjs", "simulator"]
CMD ["node", "--initial-heap-size=64", "--enable-source-maps", "packages/simulators/dist/main.js"]
