# The operator image: Node 24 LTS, non-root, read-only friendly. The build stage installs
# every dependency and bundles the operator with esbuild (`npm run build` → dist/operator.mjs,
# which inlines the production dependencies it imports); the runtime stage ships that bundle
# plus the production dependencies only, without npm, sources or dev tools.
# Build: docker build -t registry.example.com/aiops/aiops-operator:v$(node -p 'require("./package.json").version') .

FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
# The `node` package pins Node 24 for development; here the base image is the runtime.
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts \
 && rm -rf node_modules/node node_modules/.bin

FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist/operator.mjs ./dist/operator.mjs
# The image's unprivileged `node` user, by number so that runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 9443 8080 8081
ENTRYPOINT ["node", "dist/operator.mjs"]
