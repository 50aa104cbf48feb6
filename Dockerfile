# tesync worker image. Runs the TypeScript sources through tsx (as `npx tesync` does).
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# postinstall patches a postgres.js crash on connection loss (scripts/patch-postgres.mjs).
COPY scripts ./scripts
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
COPY src ./src
# The bundled simulator, for `tesync demo`.
COPY sim ./sim
COPY jobs ./jobs
COPY schema ./schema
COPY drizzle ./drizzle
# The demo prints an example query from the warehouse docs.
COPY docs ./docs
USER node
ENTRYPOINT ["node", "bin/tesync.js"]
CMD ["worker"]
