"""Onceflow's Python services: the order API and the operations tooling."""
