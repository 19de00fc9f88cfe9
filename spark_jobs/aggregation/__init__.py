"""PySpark Structured Streaming job: order events on Kafka -> analytics.* in PostgreSQL."""
