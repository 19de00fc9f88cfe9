"""Writing one record to Kafka as a principal, and reading how it was refused (the ACL tests on
a node of their own and on the running stack)."""

from typing import Any

from confluent_kafka import KafkaError, Producer

# A bounded wait for anything refused: the test never hangs on a retrying client.
REFUSAL_TIMEOUT_S = 4


def produce(config: dict[str, Any], topic: str) -> KafkaError | None:
    """Produce one record (in a transaction with a transactional id); the delivery's error."""
    producer = Producer({**config, "message.timeout.ms": REFUSAL_TIMEOUT_S * 1000})
    errors: list[KafkaError | None] = []
    transactional = "transactional.id" in config
    if transactional:
        producer.init_transactions(REFUSAL_TIMEOUT_S)
        producer.begin_transaction()
    producer.produce(topic, key=b"k", value=b"{}", on_delivery=lambda err, _m: errors.append(err))
    producer.flush(REFUSAL_TIMEOUT_S + 5)
    if transactional and errors == [None]:
        producer.commit_transaction(REFUSAL_TIMEOUT_S)
    assert errors, "the delivery was not reported within its timeout"
    return errors[0]


def code_of(error: KafkaError | None) -> int | None:
    return None if error is None else int(error.code())
