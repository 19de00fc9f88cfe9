#!/usr/bin/env bash
# Compile the Spark parser's value check (spark_jobs/aggregation/java) against PySpark's own jars
# into the job's jars folder (default .stack/lib/spark-kafka), named by the digest of its sources
# and PySpark's version (spark_jobs/aggregation/event_check.py: jar_name), which the job asks for:
# an edited source or another PySpark is compiled again, and the earlier jar is removed.
# PYTHON: the Python with pyspark.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-$root/.venv/bin/python}"
dest="${1:-$root/.stack/lib/spark-kafka}"
src="$root/spark_jobs/aggregation/java"

if ! command -v javac >/dev/null 2>&1 || ! command -v jar >/dev/null 2>&1; then
  echo "build_event_check: javac and jar are not on PATH; install a JDK 17+ (Debian: apt-get install openjdk-17-jdk-headless)." >&2
  exit 1
fi

read -r name jars < <(cd "$root" && "$python" -c '
import os, pyspark
from spark_jobs.aggregation.event_check import jar_name
print(jar_name(), os.path.join(os.path.dirname(pyspark.__file__), "jars"))')
mkdir -p "$dest"
if [[ -f "$dest/$name" ]]; then
  echo "build_event_check: $name up to date"
  exit 0
fi
echo "build_event_check: compiling $name"
classes="$(mktemp -d)"
trap 'rm -rf "$classes"' EXIT
javac -nowarn --release 17 -cp "$jars/*" -d "$classes" $(find "$src" -name '*.java')
rm -f "$dest"/onceflow-event-check-*.jar
jar cf "$dest/$name.tmp" -C "$classes" .
mv "$dest/$name.tmp" "$dest/$name"
