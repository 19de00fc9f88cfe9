"""make up refuses to start next to a stranger on its ports, in one sentence."""

import socket
from collections.abc import Iterator

import pytest

from stack import preflight, supervisor
from stack.components import Component


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def test_a_port_taken_by_another_process_stops_make_up(
    busy_port: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(supervisor, "is_running", lambda: False)
    squatter = Component(
        name="kafka", command="true", ports=(busy_port,), ready=lambda: True, where=""
    )
    with pytest.raises(preflight.PreflightError) as error:
        preflight.check_ports([squatter])
    message = str(error.value)
    assert f"Port {busy_port}" in message
    assert "kafka" in message
    assert "\n" not in message


def test_free_ports_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(supervisor, "is_running", lambda: False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    preflight.check_ports(
        [Component(name="api", command="true", ports=(free,), ready=lambda: True, where="")]
    )
