# tesync worker image. Runs the TypeScript sources through tsx (as `npx tesync` does).
# test/docs/image.test.ts runs what it copies and runs in a clean copy of the tree, no Docker needed.
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# postinstall patches postgres.js (scripts/patch-postgres.mjs): its crash on connection loss, and
# transactions with pipelining off (past a transaction pooler).
COPY scripts ./scripts
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY bin ./bin
# The sources, with what they read at run time: the SQL drizzle does not generate (src/store/sql).
COPY src ./src
# The bundled simulator, for `tesync demo`.
COPY sim ./sim
COPY drizzle ./drizzle
# The demo prints an example query from the warehouse docs.
COPY docs ./docs
USER node
ENTRYPOINT ["node", "bin/tesync.js"]
CMD ["worker"]
