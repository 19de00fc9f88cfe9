# Images of Onceflow's own components for docker-compose.yml: `api` (the order API, also used
# for provisioning, maintenance and notifications) and `aggregation` (the PySpark job's driver, with
# Spark's Kafka source and the parser's EventCheck on a local path; the executors run on
# compose's apache/spark workers).
FROM maven:3.9-eclipse-temurin-17 AS spark-kafka-jars
WORKDIR /src
COPY stack/jvm/settings.xml stack/jvm/settings.xml
COPY stack/jvm/spark-kafka stack/jvm/spark-kafka
RUN mvn -q -B -s stack/jvm/settings.xml -f stack/jvm/spark-kafka/pom.xml \
      dependency:copy-dependencies -DoutputDirectory=/jars

# Swagger UI for the API's /docs, pinned by services/orders/package-lock.json (no CDN).
FROM node:22-bookworm-slim AS swagger-ui
WORKDIR /src
COPY services/orders/package.json services/orders/package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts --loglevel=error

FROM python:3.11-slim-bookworm AS api
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml requirements.lock ./
COPY onceflow onceflow
COPY services services
COPY --from=swagger-ui /src/node_modules services/orders/node_modules
COPY spark_jobs spark_jobs
COPY stack stack
COPY migrations migrations
# The notifications instances' state folder, owned by their user: an empty named volume mounted
# there copies this owner on first use (Docker would otherwise create it as root).
RUN pip install --no-cache-dir -c requirements.lock . \
 && useradd --system --uid 10001 onceflow \
 && install -d -o onceflow /app/.stack/data/notifications
USER onceflow
CMD ["python", "-m", "services.orders"]

# The Spark parser's EventCheck (spark_jobs/aggregation/java), compiled against the installed
# PySpark's jars as `make up` compiles it (stack/build_event_check.sh); only the jar moves on.
FROM api AS event-check
USER root
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jdk-headless \
 && rm -rf /var/lib/apt/lists/* \
 && PYTHON=python stack/build_event_check.sh /jars

# The driver runs as apache/spark's user (uid 185), as the executors on the Spark workers do, so
# both can write the checkpoint volume they share (compose's spark-checkpoints service owns it to
# that user).
FROM api AS aggregation
USER root
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 185 spark \
 && useradd --system --uid 185 --gid spark --home-dir /nonexistent spark
COPY --from=spark-kafka-jars /jars /app/.stack/lib/spark-kafka
COPY --from=event-check /jars /app/.stack/lib/spark-kafka
USER spark
CMD ["python", "-m", "spark_jobs.aggregation"]
