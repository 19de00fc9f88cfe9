# Images of Onceflow's own components for docker-compose.yml: `api` (the order API, also used
# for provisioning and maintenance) and `aggregation` (the PySpark job with Spark's Kafka source on a local path).
FROM maven:3.9-eclipse-temurin-17 AS spark-kafka-jars
WORKDIR /src
COPY stack/jvm/settings.xml stack/jvm/settings.xml
COPY stack/jvm/spark-kafka stack/jvm/spark-kafka
RUN mvn -q -B -s stack/jvm/settings.xml -f stack/jvm/spark-kafka/pom.xml \
      dependency:copy-dependencies -DoutputDirectory=/jars

FROM python:3.11-slim-bookworm AS api
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml requirements.lock ./
COPY onceflow onceflow
COPY services services
COPY spark_jobs spark_jobs
COPY stack stack
COPY migrations migrations
RUN pip install --no-cache-dir -c requirements.lock . \
 && useradd --system --uid 10001 onceflow
USER onceflow
CMD ["python", "-m", "services.orders"]

FROM api AS aggregation
USER root
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
 && rm -rf /var/lib/apt/lists/*
COPY --from=spark-kafka-jars /jars /app/.stack/lib/spark-kafka
USER onceflow
CMD ["python", "-m", "spark_jobs.aggregation"]
