# One image for every Quarry service; the command picks the service (quarry serve <name>).
# Untested in CI: the machines that build Quarry have no Docker engine.
FROM node:20-bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# The CLI compiled ahead of time (npm ci's prepare ran before the sources were here).
RUN node scripts/build-cli.mjs
# The local embedding models (every catalog model), baked in so no container downloads at run time.
RUN node scripts/fetch-model.mjs
ENV QUARRY_HOST=0.0.0.0 QUARRY_DATA_DIR=/data
ENTRYPOINT ["node", "bin/quarry.mjs", "serve"]
