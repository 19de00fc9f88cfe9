"""Continuous reconciliation (contract §5): for every closed UTC day, the order tables, the topic
and the analytics tables agree, per event type and currency (docs/operations.md
"Reconciliation")."""
