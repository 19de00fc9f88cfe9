"""The notifications processor: every order event becomes exactly one customer notification,
in Kafka transactions that also commit the input offsets (contract section 4b)."""
