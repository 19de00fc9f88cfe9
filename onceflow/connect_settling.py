"""A Kafka Connect task that failed while the workers of a fresh group settled (pure): a restart
is all it takes. Start-up (stack/connector.py) restarts such a task at once; the connect
watchdog's policy (services/ops/connect_watchdog_policy.py) does not count its first restart."""

from collections.abc import Mapping
from typing import Any

# A task can fail while the workers of a fresh group settle: the zombie fencing its start asks
# the leader for is refused (the group's session key not yet shared by every worker). Connect
# does not retry it (KAFKA-15059 says: restart the task).
SETTLING = ("Internal request contained invalid signature",)


def failed_while_settling(task: Mapping[str, Any]) -> bool:
    """A FAILED task (an entry of Connect's status `tasks`) whose trace says the group was
    settling (SETTLING)."""
    return task.get("state") == "FAILED" and any(m in task.get("trace", "") for m in SETTLING)
