#!/usr/bin/env bash
# Runs Quarry's engines (OpenSearch, Kafka, Apache Tika) as plain Java processes on 127.0.0.1,
# for machines without Docker (dev boxes, CI). Everything comes from Maven Central via pom.xml.
#
#   engines.sh fetch  [engine...]   download + unpack into $QUARRY_ENGINES_DIR (cached)
#   engines.sh up     [engine...]   fetch if needed, start, wait until ready, print export lines
#   engines.sh down   [engine...]   stop what `up` started
#   engines.sh status [engine...]   running? ready? memory (RSS now / peak)
#   engines.sh logs   [engine]      tail the engine logs (LINES=100)
#   engines.sh env                  print the export lines
#
# engine is one of: opensearch kafka tika elasticsearch (default: the first three; elasticsearch is
# optional and joins the default set only with QUARRY_ENGINES_WITH_ES=1). Ports: QUARRY_OPENSEARCH_PORT,
# QUARRY_KAFKA_PORT, QUARRY_TIKA_PORT, ... (see docs/engines.md); `env` prints the matching exports.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
POM="$HERE/pom.xml"
ENGINES_DIR="${QUARRY_ENGINES_DIR:-$HOME/.cache/quarry/engines}"
RUN_DIR="${QUARRY_ENGINES_RUN:-$HOME/.cache/quarry/run}"
TIMEOUT="${QUARRY_ENGINES_TIMEOUT:-240}"
ALL_ENGINES=(opensearch kafka tika)
# Elasticsearch is an alternative to OpenSearch, not part of Quarry's default topology.
[[ "${QUARRY_ENGINES_WITH_ES:-0}" == 1 ]] && ALL_ENGINES+=(elasticsearch)

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

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Starts "$@" in its own session so `down` can stop the engine and anything it forked (Tika's
# child JVM) as one process group.
spawn() {
  local name="$1"; shift
  setsid "$@" >>"$(log_file "$name")" 2>&1 </dev/null &
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

start_opensearch() {
  local run="$RUN_DIR/opensearch"
  mkdir -p "$run/config" "$run/data" "$run/logs"
  # Config lives in the run dir so the cached install stays read-only and a fresh run dir works.
  cp -n "$OS_HOME/config/jvm.options" "$OS_HOME/config/log4j2.properties" "$run/config/"
  [[ -d "$run/config/jvm.options.d" ]] || mkdir -p "$run/config/jvm.options.d"
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
  local prefix
  prefix="$(non_root_prefix)"
  # jvm.options writes gc.log and heap dumps relative to the working directory.
  ( cd "$run" && export OPENSEARCH_PATH_CONF="$run/config" OPENSEARCH_JAVA_HOME="$(java_home)" \
      OPENSEARCH_JAVA_OPTS="${OPENSEARCH_JAVA_OPTS:--Xms1g -Xmx1g}" \
      && spawn opensearch $prefix "$OS_HOME/bin/opensearch" )
}

start_kafka() {
  local run="$RUN_DIR/kafka"
  mkdir -p "$run/data" "$run/logs"
  cat >"$run/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$run/data
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# Quarry creates its topics itself; a typo should fail loudly, not create a topic.
auto.create.topics.enable=false
# Parsed documents travel on the bus; 16 MiB leaves room for large ones.
message.max.bytes=16777216
replica.fetch.max.bytes=16777216
EOF
  cat >"$run/log4j2.properties" <<'EOF'
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
  if [[ ! -f "$run/data/meta.properties" ]]; then
    # Kafka cluster ids are 16 random bytes in unpadded URL-safe base64.
    local cluster_id
    cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
    log "formatting Kafka storage (cluster id $cluster_id)"
    "$(java_bin)" -Xmx256m -cp "$KAFKA_HOME/libs/*" -Dlog4j2.configurationFile="$run/log4j2.properties" \
      kafka.tools.StorageTool format -t "$cluster_id" -c "$run/server.properties" >>"$(log_file kafka)" 2>&1 \
      || { tail -n 30 "$(log_file kafka)" >&2; die "Kafka storage format failed"; }
  fi
  spawn kafka "$(java_bin)" ${KAFKA_HEAP_OPTS:--Xms512m -Xmx512m} -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -Djava.awt.headless=true -Dlog4j2.configurationFile="$run/log4j2.properties" \
    -cp "$KAFKA_HOME/libs/*" kafka.Kafka "$run/server.properties"
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
    elasticsearch) echo $ELASTICSEARCH_PORT ;;
  esac
}

start_engine() {
  local name="$1" pid
  if pid="$(running_pid "$name")"; then log "$name already running (pid $pid)"; return 0; fi
  local port; port="$(engine_port "$name")"
  port_busy "$port" && die "port $port is taken by a process engines.sh did not start; cannot start $name"
  mkdir -p "$RUN_DIR/$name/logs"
  log "starting $name"
  "start_$name"
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

wait_ready() {
  local name="$1" deadline=$(( $(date +%s) + TIMEOUT ))
  until "ready_$name"; do
    if ! running_pid "$name" >/dev/null; then
      log "$name exited during start-up; last log lines:"; tail -n 40 "$(log_file "$name")" >&2 || true
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
  echo "export OPENSEARCH_URL=http://127.0.0.1:$OPENSEARCH_PORT"
  echo "export KAFKA_BROKERS=127.0.0.1:$KAFKA_PORT"
  echo "export TIKA_URL=http://127.0.0.1:$TIKA_PORT"
  # Only when asked for or running: a set ELASTICSEARCH_URL switches on the Elasticsearch suites.
  if [[ " ${ALL_ENGINES[*]} " == *" elasticsearch "* ]] || running_pid elasticsearch >/dev/null; then
    echo "export ELASTICSEARCH_URL=http://127.0.0.1:$ELASTICSEARCH_PORT"
  fi
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
      opensearch | kafka | tika | elasticsearch) echo "$e" ;;
      *) die "unknown engine '$e' (opensearch, kafka, tika, elasticsearch)" ;;
    esac
  done
}

cmd_fetch() {
  local e
  for e in $(pick_engines "$@"); do fetch_engine "$e"; done
}

cmd_up() {
  local e t0 engines
  engines="$(pick_engines "$@")"
  t0="$(now_ms)"
  for e in $engines; do fetch_engine "$e"; done
  for e in $engines; do start_engine "$e"; done
  for e in $engines; do
    wait_ready "$e"
    log "$e ready ($(group_mem "$(running_pid "$e")")) after $(( ($(now_ms) - t0) / 1000 ))s"
  done
  log "all ready in $(( ($(now_ms) - t0) / 1000 ))s; export these:"
  print_env
}

cmd_down() {
  local e
  for e in $(pick_engines "$@"); do stop_engine "$e"; done
}

cmd_status() {
  local e pid state rc=0
  for e in $(pick_engines "$@"); do
    if pid="$(running_pid "$e")"; then
      if "ready_$e"; then state="ready"; else state="starting/unhealthy"; rc=1; fi
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
    for f in "$RUN_DIR/$e/logs/$e.out" "$RUN_DIR/$e/logs/quarry-local.log"; do
      [[ -f "$f" ]] || continue
      echo "==> $f <=="
      tail -n "${LINES:-100}" "$f"
    done
  done
}

usage() { sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

main() {
  local cmd="${1:-}"; shift || true
  case "$cmd" in
    fetch) cmd_fetch "$@" ;;
    up) cmd_up "$@" ;;
    down) cmd_down "$@" ;;
    status) cmd_status "$@" ;;
    logs) cmd_logs "$@" ;;
    env) print_env ;;
    -h | --help | help | "") usage ;;
    *) usage >&2; exit 2 ;;
  esac
}

main "$@"
