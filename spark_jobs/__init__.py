"""Spark jobs of the Onceflow pipeline."""
