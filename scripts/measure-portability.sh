#!/usr/bin/env bash
# Measures issue 29's goal side by side in one run: a SciFact base ingested embedded (SQLite), then
# (1) the same documents ingested fresh into a Quarry on OpenSearch and (2) the SQLite base exported
# and imported into another Quarry on OpenSearch; prints both times, their ratio and each base's
# hybrid nDCG@10. Needs OPENSEARCH_URL and ../shared/eval/scifact; N documents (default 1000).
#   OPENSEARCH_URL=http://127.0.0.1:9200 scripts/measure-portability.sh [N]
set -euo pipefail
N=${1:-1000}
DS=${SCIFACT_DIR:-"$(cd "$(dirname "$0")/.." && pwd)/../shared/eval/scifact"}
: "${OPENSEARCH_URL:?set OPENSEARCH_URL}"
Q="node $(cd "$(dirname "$0")/.." && pwd)/bin/quarry.mjs"
WORK=$(mktemp -d /tmp/quarry-portability-XXXX)
RUN=$(date +%s)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
  # By name: a wildcard delete may be refused (action.destructive_requires_name).
  for index in $(curl -s "$OPENSEARCH_URL/_cat/indices/quarry-pm-$RUN-*?h=index"); do curl -s -XDELETE "$OPENSEARCH_URL/$index" >/dev/null; done
}
trap cleanup EXIT INT TERM
free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
serve() { # data-dir port [env...]
  local dir=$1 port=$2; shift 2
  # Without the caller's Kafka or Tika: three Quarrys on one broker's unprefixed topics would share
  # consumer groups and take each other's documents (a fresh ingest then never finished).
  env -u KAFKA_BROKERS -u TIKA_URL -u ELASTICSEARCH_URL "$@" QUARRY_DATA_DIR="$dir" QUARRY_PORT="$port" $Q serve >"$dir.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 120); do curl -s "http://127.0.0.1:$port/" >/dev/null && return 0; sleep 1; done
  echo "Quarry on $port did not start: $(tail -5 "$dir.log")" >&2; return 1
}
ndcg() { $Q eval --dataset "$DS" --limit-docs "$N" --mode hybrid --json --url "$1" --knowledge-base sf --rankings "$2" 2>/dev/null | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s.trim().split("\n").at(-1));console.log(Number(r.ndcg_at_10).toFixed(4))})'; }
secs() { node -e "console.log(((Date.now()-$1)/1000).toFixed(1))"; }
now() { node -e 'console.log(Date.now())'; }

P1=$(free_port); serve "$WORK/sqlite" "$P1"
t=$(now); ndcg "http://127.0.0.1:$P1" "$WORK/sqlite.rankings" >"$WORK/sqlite.ndcg"; SQLITE_S=$(secs "$t")

P2=$(free_port); serve "$WORK/fresh" "$P2" OPENSEARCH_URL="$OPENSEARCH_URL" QUARRY_OPENSEARCH_PREFIX="quarry-pm-$RUN-fresh"
t=$(now); ndcg "http://127.0.0.1:$P2" "$WORK/fresh.rankings" >"$WORK/fresh.ndcg"; FRESH_S=$(secs "$t")

P3=$(free_port); serve "$WORK/imported" "$P3" OPENSEARCH_URL="$OPENSEARCH_URL" QUARRY_OPENSEARCH_PREFIX="quarry-pm-$RUN-imp"
t=$(now)
$Q export sf "$WORK/sf.quarry.gz" --url "http://127.0.0.1:$P1" >/dev/null
$Q import "$WORK/sf.quarry.gz" --url "http://127.0.0.1:$P3"
MOVE_S=$(secs "$t")
t=$(now); IMPORTED=$(ndcg "http://127.0.0.1:$P3" "$WORK/imported.rankings"); EVAL_S=$(secs "$t")

echo "documents: $N   archive: $(du -h "$WORK/sf.quarry.gz" | cut -f1)"
echo "SQLite ingest + eval:              ${SQLITE_S} s   hybrid nDCG@10 $(cat "$WORK/sqlite.ndcg")"
echo "OpenSearch fresh ingest + eval:    ${FRESH_S} s   hybrid nDCG@10 $(cat "$WORK/fresh.ndcg")"
echo "export SQLite + import OpenSearch: ${MOVE_S} s   hybrid nDCG@10 ${IMPORTED}"
# Top-10 overlap per query: the share of the fresh ingest's top 10 documents the imported base also returns in its top 10.
overlap() { node -e '
  const fs = require("fs");
  const read = (f) => new Map(fs.readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l)).map((r) => [r.query, r.ranking.slice(0, 10)]));
  const a = read(process.argv[1]), b = read(process.argv[2]);
  let shared = 0, same = 0;
  for (const [q, top] of a) { const other = new Set(b.get(q) ?? []); const n = top.filter((d) => other.has(d)).length; shared += top.length ? n / top.length : 1; if (n === top.length && (b.get(q) ?? []).length === top.length) same++; }
  console.log(`mean ${(shared / a.size).toFixed(4)}, identical top-10 sets on ${same} of ${a.size} queries`);
' "$1" "$2"; }
echo "top-10 overlap, imported vs fresh OpenSearch: $(overlap "$WORK/fresh.rankings" "$WORK/imported.rankings")"
echo "top-10 overlap, imported vs SQLite source:    $(overlap "$WORK/sqlite.rankings" "$WORK/imported.rankings")"
echo "eval pass alone (queries on the imported base): ${EVAL_S} s"
node -e "const ingest = $FRESH_S - $EVAL_S; console.log('OpenSearch fresh ingest ≈ ' + ingest.toFixed(1) + ' s; export + import ' + $MOVE_S + ' s: ' + (ingest / $MOVE_S).toFixed(1) + '× faster')"
