"""Scheduled maintenance: keeps every piece of the pipeline's state bounded (contract §5)."""
