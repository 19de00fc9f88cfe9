"""Every test of the fault library starts and ends with none of its rules or proxies."""

from tests.faults.fixtures import network_faults

__all__ = ["network_faults"]
