#!/usr/bin/env bash
# Resolve the JVM components of the local stack from Maven Central, each into its own folder
# (separate classpaths):
#   .stack/lib/kafka          KRaft broker and Kafka's command-line tools (stack/jvm/kafka/pom.xml)
#   .stack/lib/connect        Kafka Connect worker  (stack/jvm/connect/pom.xml)
#   .stack/lib/spark-kafka    Spark's Kafka source + PostgreSQL JDBC driver (stack/jvm/spark-kafka/pom.xml)
#   .stack/plugins/debezium-connector-postgres      (stack/jvm/debezium/pom.xml)
#   .stack/lib/jmx            Prometheus JMX exporter agent (stack/jvm/jmx/pom.xml)
# A folder whose marker matches its POM is skipped, so re-running is cheap; editing a POM (e.g. a
# version bump) refetches that folder from scratch. Then it writes .stack/bin/kafka-*.sh: Kafka's
# command-line tools under their names in Kafka's distribution (the runbooks in
# docs/operations.md use them), on the broker's classpath.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jvm="$root/stack/jvm"

for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "fetch_jars: '$tool' is not on PATH; install a JDK 17+ and Maven 3.8+ (Debian: apt-get install openjdk-17-jdk-headless maven)." >&2
    exit 1
  fi
done

# Maven 3.8 prints ANSI resets even with -B -q; strip them (pipefail keeps mvn's exit status).
mvn_q() { mvn -q -B -s "$jvm/settings.xml" "$@" 2>&1 | sed -e 's/\x1b\[[0-9;]*m//g'; }

# fetch NAME DEST GOAL...: run GOAL on stack/jvm/NAME/pom.xml unless DEST holds a matching marker.
fetch() {
  local name="$1" dest="$2"; shift 2
  local pom="$jvm/$name/pom.xml" marker="$dest/.onceflow-fetched"
  local want; want="$(cat "$pom" "$jvm/settings.xml" | sha256sum | cut -d' ' -f1)"
  if [[ -f "$marker" && "$(cat "$marker")" == "$want" ]]; then
    echo "fetch_jars: $name up to date"
    return
  fi
  echo "fetch_jars: fetching $name into ${dest#"$root"/}"
  rm -rf "$dest"
  mkdir -p "$dest"
  mvn_q -f "$pom" "$@"
  echo "$want" > "$marker"
}

fetch kafka "$root/.stack/lib/kafka" \
  dependency:copy-dependencies -DoutputDirectory="$root/.stack/lib/kafka"
fetch connect "$root/.stack/lib/connect" \
  dependency:copy-dependencies -DoutputDirectory="$root/.stack/lib/connect"
fetch spark-kafka "$root/.stack/lib/spark-kafka" \
  dependency:copy-dependencies -DoutputDirectory="$root/.stack/lib/spark-kafka"
# The plugin archive's top folder is debezium-connector-postgres/, so unpack into its parent.
fetch debezium "$root/.stack/plugins/debezium-connector-postgres" \
  dependency:unpack -Dplugins.dir="$root/.stack/plugins"
# One shaded jar, attached to the broker and Connect JVMs with -javaagent (stack/jvm.py).
fetch jmx "$root/.stack/lib/jmx" \
  dependency:copy -Djmx.dir="$root/.stack/lib/jmx"

# kafka_tool NAME MAIN: .stack/bin/NAME runs Kafka's tool MAIN (what bin/NAME of Kafka's
# distribution runs), from any directory. Rewritten only when it changed.
bin="$root/.stack/bin"
mkdir -p "$bin"
kafka_tool() {
  local script="$bin/$1" text
  text="#!/bin/sh
# Apache Kafka's $1 ($2), on the classpath of the stack's broker.
# Written by stack/fetch_jars.sh (make up); Kafka's options apply, e.g. --bootstrap-server 127.0.0.1:9092.
exec java -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \\
  -Dlog4j2.configurationFile='$root/stack/jvm/tools-log4j2.properties' \\
  -cp '$root/.stack/lib/kafka/*' $2 \"\$@\""
  if [[ ! -x "$script" || "$(cat "$script")" != "$text" ]]; then
    printf '%s\n' "$text" > "$script"
    chmod 755 "$script"
  fi
}
kafka_tool kafka-topics.sh org.apache.kafka.tools.TopicCommand
kafka_tool kafka-transactions.sh org.apache.kafka.tools.TransactionsCommand
kafka_tool kafka-consumer-groups.sh org.apache.kafka.tools.consumer.group.ConsumerGroupCommand
kafka_tool kafka-metadata-quorum.sh org.apache.kafka.tools.MetadataQuorumCommand
kafka_tool kafka-get-offsets.sh org.apache.kafka.tools.GetOffsetShell
kafka_tool kafka-console-consumer.sh org.apache.kafka.tools.consumer.ConsoleConsumer
kafka_tool kafka-features.sh org.apache.kafka.tools.FeatureCommand
