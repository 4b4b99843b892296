# The operator image: Node 24, non-root, runs with a read-only root filesystem. The build
# stage installs every dependency and bundles the operator with esbuild (`npm run build` →
# dist/operator/: operator.mjs, which inlines every dependency the operator runs at start, with the
# chunks and vendor packages only some installs load beside it, and main.mjs, which starts it
# with V8's compile cache); the runtime stage ships that directory on the Node base image,
# without npm's tree, sources or dev tools.
# Release: npm run image -- --release  (buildah, BASE = the reference image-base.txt pins by
# digest; it refuses a base without one). With Docker, the same base:
# v=$(node -p 'require("./package.json").version'); docker build --build-arg BASE=$(grep -v '^#' image-base.txt) --build-arg VERSION=$v --build-arg REVISION=$(git rev-parse HEAD) -t registry.example.com/aiops/aiops-operator:v$v .
# Here (no Docker): npm run image  (buildah, BASE=localhost/aiops/node-base:24, a Node 24 base
# made locally under a name of its own, so it never stands in for the real node:24-slim)

ARG BASE=node:24-slim
FROM ${BASE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --prefer-offline --no-audit --no-fund
COPY . .
# Source maps stay out of the image (Node reads none without --enable-source-maps).
RUN npm run build && rm -r dist/operator/*.map dist/operator/vendor/*.map dist/operator/compile-cache
# V8's compile cache of the operator's code (dist/operator/compile-cache/, which main.mjs turns on)
# made again (the build's, root's, is removed) by this base's node as the user the image runs as:
# Node keys the cache by its version and the user's id, and ignores one made by another. Made in a
# copy that user owns; the cache is portable (keyed by paths relative to it), so the copy's place
# is not part of it.
USER 1000:1000
RUN cp -r dist/operator /tmp/operator && node /tmp/operator/main.mjs --help > /dev/null \
    && chmod -R a+rX,go-w /tmp/operator/compile-cache

FROM ${BASE}
ARG BASE
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="aiops-operator" \
      org.opencontainers.image.description="Self-healing Kubernetes operator for AITask resources, with its conversion webhook" \
      org.opencontainers.image.url="https://aiops.example.com" \
      org.opencontainers.image.source="https://aiops.example.com/source" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.base.name="${BASE}"
ENV NODE_ENV=production
# Memory as deployed (npm run bench -- memory and -- peer measure with exactly these): a 1 MiB
# young generation instead of V8's up to 16 MiB, on node's command line (below), so that a
# NODE_OPTIONS set by a Subscription's config.env or a Deployment adds to it rather than
# replacing it; two malloc arenas and a fixed mmap threshold keep freed buffers from staying
# resident in glibc's heaps. No --expose-gc: it would make Node compile its own modules from
# source at every start (lib/full-gc.ts gets the collections the operator runs without it).
ENV MALLOC_ARENA_MAX=2
ENV MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=build --chown=0:0 /tmp/operator ./dist/operator
# The image's unprivileged `node` user, by number so that runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 9443 8443 8081
ENTRYPOINT ["node", "--max-semi-space-size=1", "dist/operator/main.mjs"]
