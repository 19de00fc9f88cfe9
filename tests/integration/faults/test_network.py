"""The network fault library on real nftables and a real Toxiproxy (no mocks): peers on their
own loopback addresses lose each other in a partition, and find each other again after it;
loss drops about the share asked; delay adds at least what it says; nothing of the library is
left after a failure or after its process exits; an address of another machine is refused."""

import signal
import subprocess
import sys

import pytest

from onceflow import paths
from tests import faults
from tests.faults import __main__ as cli
from tests.faults import nft, toxiproxy
from tests.integration.faults.peers import (
    blocked,
    connect,
    datagrams_through,
    echo_server,
    echoes,
    free_port,
    reaches,
    round_trip_s,
)

pytestmark = pytest.mark.usefixtures("network_faults")

A, B, C = "127.0.26.2", "127.0.26.3", "127.0.26.4"


def _nothing_left() -> None:
    assert not nft.exists(), "the library's nftables table is still there"
    assert toxiproxy.ours() == {}, "a proxy of the library is still there"


def test_a_partition_blocks_both_ways_and_the_end_of_it_heals() -> None:
    with echo_server(A) as port_a, echo_server(B) as port_b:
        assert reaches(A, B, port_b)
        assert reaches(B, A, port_a)
        established = connect(A, B, port_b)
        with faults.partition(A, B):
            assert blocked(A, B, port_b), "a to b passed the partition"
            assert blocked(B, A, port_a), "b to a passed the partition"
            assert not echoes(established), "an open connection still carried data"
            assert reaches(C, B, port_b), "a third address lost b too"
        _nothing_left()
        assert reaches(A, B, port_b)
        assert reaches(B, A, port_a)
        # The open connection lived through it: TCP retransmits what was dropped.
        established.settimeout(10)
        assert established.recv(1) == b"x"
        established.close()


def test_heal_ends_every_fault_at_once_inside_their_blocks() -> None:
    with echo_server(B) as port_b, faults.partition(A, B), faults.isolate(C):
        assert blocked(A, B, port_b)
        assert blocked(C, B, port_b)
        faults.heal()
        assert reaches(A, B, port_b)
        assert reaches(C, B, port_b)
    _nothing_left()


def test_an_isolated_node_reaches_no_one_and_no_one_reaches_it() -> None:
    with echo_server(A) as port_a, echo_server(B) as port_b, echo_server(C) as port_c:
        with faults.isolate(A):
            assert blocked(A, B, port_b)
            assert blocked(C, A, port_a)
            assert reaches(A, A, port_a), "the node lost itself"
            assert reaches(B, C, port_c), "two other nodes lost each other"
        assert reaches(A, B, port_b)
        assert reaches(C, A, port_a)


def test_loss_drops_about_the_share_asked_each_way() -> None:
    sent = 2000
    with faults.loss(A, B, 30):
        there = 1 - datagrams_through(A, B, sent) / sent
        back = 1 - datagrams_through(B, A, sent) / sent
        untouched = datagrams_through(A, C, sent)
    # 30 % of 2000: one standard deviation is 1.02 %; the bound is 5 of them.
    assert 0.25 < there < 0.35, there
    assert 0.25 < back < 0.35, back
    assert untouched == sent, "traffic outside the pair was lost"
    assert datagrams_through(A, B, sent) == sent, "loss went on after its block"


def test_delay_adds_at_least_what_it_says_to_each_round_trip() -> None:
    with (
        echo_server(B) as echo,
        faults.link(A, B, port=free_port(B), upstream=f"{B}:{echo}") as via,
    ):
        host, port = via.split(":")
        with connect(A, host, int(port), timeout=5) as sock:
            before = min(round_trip_s(sock) for _ in range(5))
            with faults.delay(A, B, 200, jitter=20):
                during = [round_trip_s(sock) for _ in range(5)]
            after = min(round_trip_s(sock) for _ in range(5))
    assert before < 0.1, before
    assert after < 0.1, after
    assert min(during) >= 0.18, during  # 200 ms less the jitter
    _nothing_left()


def test_a_failing_block_leaves_no_rule_toxic_or_proxy() -> None:
    with echo_server(B) as echo, pytest.raises(RuntimeError, match="the test failed"):
        _fail_inside_every_fault(echo)
    _nothing_left()


def _fail_inside_every_fault(echo: int) -> None:
    with (
        faults.link(A, B, port=free_port(B), upstream=f"{B}:{echo}"),
        faults.delay(A, B, 100),
        faults.partition(A, B),
        faults.loss(B, C, 50),
    ):
        assert nft.exists()
        assert toxiproxy.ours()
        raise RuntimeError("the test failed")


def test_the_process_exit_removes_what_it_left() -> None:
    """A process that exits inside a fault (no block ended) leaves nothing."""
    code = "from tests import faults\nfaults.partition('127.0.26.2', '127.0.26.3').__enter__()\n"
    subprocess.run([sys.executable, "-c", code], cwd=paths.ROOT, check=True, timeout=60)
    _nothing_left()


def test_the_fixture_removes_what_a_killed_run_left() -> None:
    nft.add_chain("partition", ["ip saddr 127.0.26.2 ip daddr 127.0.26.3 drop"])
    assert nft.exists()
    with faults.cleaned_up():
        _nothing_left()


def test_an_address_of_another_machine_is_refused() -> None:
    for node in ["10.1.2.3", "192.168.0.1", "8.8.8.8", "::1", "db.example"]:
        refused = pytest.raises(faults.NotLocalError, match=r"loopback address")
        with refused, faults.partition(A, node):
            pass
        with refused, faults.isolate(node):
            pass
        with refused, faults.link(A, B, port=40000, upstream=f"{node}:5432"):
            pass
    _nothing_left()


def test_a_fault_between_a_node_and_itself_or_without_a_link_is_refused() -> None:
    with pytest.raises(ValueError, match="same address"), faults.partition(A, A):
        pass
    with pytest.raises(ValueError, match="no link between"), faults.delay(A, B, 100):
        pass
    with pytest.raises(ValueError, match="percent"), faults.loss(A, B, 0):
        pass


def test_named_nodes_stand_for_their_addresses() -> None:
    with echo_server(B) as port_b, faults.named({"shop": A, "db": B}):
        with faults.partition("shop", "db"):
            assert blocked(A, B, port_b)
        assert reaches(A, B, port_b)
    with (
        pytest.raises(faults.NotLocalError, match="named now: none"),
        faults.partition("shop", "db"),
    ):
        pass
    _nothing_left()


def test_the_command_line_holds_a_fault_until_stopped_and_refuses_another_host(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["partition", "10.0.0.1", A]) == 2
    assert "refused: 10.0.0.1 is not a loopback address" in capsys.readouterr().err
    with echo_server(B) as port_b:
        holder = subprocess.Popen(
            [sys.executable, "-m", "tests.faults", "partition", A, B],
            cwd=paths.ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline() == f"partition {A} {B}: in force\n"
            assert blocked(A, B, port_b)
        finally:
            holder.send_signal(signal.SIGTERM)
            assert holder.wait(30) == 0
        assert reaches(A, B, port_b)
    _nothing_left()
