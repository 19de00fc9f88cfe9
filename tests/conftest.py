"""Every test process's Kafka clients connect as the `tests` principal (docs/security.md), also
the code under test that would use its own (the processor, the job's source, the ops tools):
they read and write the tests' scratch topics. Set before any settings are read."""

import os

os.environ.setdefault("ONCEFLOW_KAFKA_PRINCIPAL", "tests")
