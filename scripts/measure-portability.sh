#!/usr/bin/env bash
# Measures issue 29's goal side by side in one run, on one document set: a SciFact base ingested
# embedded (SQLite), then (1) the same documents ingested fresh into a Quarry on OpenSearch and
# (2) the SQLite base exported and imported into another Quarry on OpenSearch. Prints the fresh
# ingest's time, the export + import time, their ratio, each base's hybrid nDCG@10 and how many
# queries' top-10 differ. Needs OPENSEARCH_URL and ../shared/eval/scifact. N documents (default
# 300: SciFact's 300 test queries judge 283 documents, so all of them are in, plus distractors).
#   OPENSEARCH_URL=http://127.0.0.1:9200 scripts/measure-portability.sh [N]
set -euo pipefail
N=${1:-300}
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DS=${SCIFACT_DIR:-"$ROOT/../shared/eval/scifact"}
: "${OPENSEARCH_URL:?set OPENSEARCH_URL}"
Q="node $ROOT/bin/quarry.mjs"
WORK=$(mktemp -d /tmp/quarry-portability-XXXX)
RUN=$(date +%s)
PIDS=()
cleanup() {
  local status=$?
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ "$status" -ne 0 ]; then for f in "$WORK"/*.log "$WORK"/*.err; do [ -f "$f" ] && { echo "--- $f" >&2; tail -5 "$f" >&2; }; done; fi
  rm -rf "$WORK"
  # By name: a wildcard delete may be refused (action.destructive_requires_name).
  for index in $(curl -s "$OPENSEARCH_URL/_cat/indices/quarry-pm-$RUN-*?h=index"); do curl -s -XDELETE "$OPENSEARCH_URL/$index" >/dev/null; done
}
trap cleanup EXIT INT TERM
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
serve() { # data-dir port [env...]
  local dir=$1 port=$2; shift 2
  # Without the caller's engines: three Quarrys on one broker's unprefixed topics would share
  # consumer groups and take each other's documents (a fresh ingest then never finished), and the
  # SQLite one would be on OpenSearch's default prefix, finding whatever base "sf" an earlier run left.
  env -u OPENSEARCH_URL -u KAFKA_BROKERS -u TIKA_URL -u ELASTICSEARCH_URL "$@" QUARRY_DATA_DIR="$dir" QUARRY_PORT="$port" $Q serve >"$dir.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 120); do curl -s "http://127.0.0.1:$port/" >/dev/null && return 0; sleep 1; done
  echo "Quarry on $port did not start: $(tail -5 "$dir.log")" >&2; return 1
}
# eval URL NAME: ingests the N documents into base "sf" (or reuses it when it holds documents) and
# scores the hybrid mode; writes NAME.json (the result line) and NAME.rankings.
evaluate() {
  $Q eval --dataset "$DS" --limit-docs "$N" --mode hybrid --json --url "$1" --knowledge-base sf --rankings "$WORK/$2.rankings" >"$WORK/$2.out" 2>"$WORK/$2.err"
  tail -1 "$WORK/$2.out" >"$WORK/$2.json"
  if [ "$2" != imported ] && grep -q "(reused)" "$WORK/$2.err"; then echo "the $2 Quarry already held a base sf: not a fresh ingest" >&2; return 1; fi
}
field() { node -e 'const r=JSON.parse(require("fs").readFileSync(process.argv[1],"utf8"));const v=r[process.argv[2]];console.log(typeof v==="number"?Number(v.toFixed(4)):v)' "$WORK/$1.json" "$2"; }
now() { node -e 'console.log(Date.now())'; }
secs() { node -e "console.log(((Date.now()-$1)/1000).toFixed(1))"; }

P1=$(free_port); serve "$WORK/sqlite" "$P1"
evaluate "http://127.0.0.1:$P1" sqlite

P2=$(free_port); serve "$WORK/fresh" "$P2" OPENSEARCH_URL="$OPENSEARCH_URL" QUARRY_OPENSEARCH_PREFIX="quarry-pm-$RUN-fresh"
evaluate "http://127.0.0.1:$P2" fresh
FRESH_S=$(field fresh ingest_seconds)

P3=$(free_port); serve "$WORK/imported" "$P3" OPENSEARCH_URL="$OPENSEARCH_URL" QUARRY_OPENSEARCH_PREFIX="quarry-pm-$RUN-imp"
t=$(now); $Q export sf "$WORK/sf.quarry.gz" --url "http://127.0.0.1:$P1" >/dev/null; EXPORT_S=$(secs "$t")
t=$(now); $Q import "$WORK/sf.quarry.gz" --url "http://127.0.0.1:$P3" >/dev/null; IMPORT_S=$(secs "$t")
evaluate "http://127.0.0.1:$P3" imported

# Per query: do two bases return the same top-10 documents (as a set, and in the same order)?
compare() { node -e '
  const fs = require("fs");
  const read = (f) => new Map(fs.readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l)).map((r) => [r.query, r.ranking.slice(0, 10)]));
  const a = read(process.argv[1]), b = read(process.argv[2]);
  let sets = 0, order = 0;
  for (const [q, top] of a) {
    const other = b.get(q) ?? [];
    const same = new Set([...top, ...other]).size === top.length && top.length === other.length;
    if (!same) sets++;
    if (top.join() !== other.join()) order++;
  }
  console.log(`${sets} of ${a.size} queries differ in their top-10 set, ${order} in its order`);
' "$WORK/$1.rankings" "$WORK/$2.rankings"; }

echo "SciFact, $(field fresh queries) queries, $(field fresh docs) documents ($(field fresh chunks) chunks), model $(field fresh embedding_model); archive $(du -h "$WORK/sf.quarry.gz" | cut -f1)"
echo "| base | time | hybrid nDCG@10 |"
echo "| --- | --- | --- |"
echo "| SQLite, ingested | $(field sqlite ingest_seconds) s | $(field sqlite ndcg_at_10) |"
echo "| OpenSearch, fresh ingest | $FRESH_S s | $(field fresh ndcg_at_10) |"
echo "| OpenSearch, imported from the SQLite base | export $EXPORT_S s + import $IMPORT_S s | $(field imported ndcg_at_10) |"
node -e "const f=$FRESH_S, m=$EXPORT_S+$IMPORT_S; console.log('export + import ' + m.toFixed(1) + ' s vs fresh ingest ' + f + ' s: ' + (f / m).toFixed(1) + '× faster')"
node -e "console.log('nDCG@10, imported − fresh: ' + ($(field imported ndcg_at_10) - $(field fresh ndcg_at_10)).toFixed(4))"
echo "imported vs fresh OpenSearch: $(compare fresh imported)"
echo "imported vs SQLite source:    $(compare sqlite imported)"
