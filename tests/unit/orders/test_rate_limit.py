"""Token buckets on an injected clock: bursts up to their size, then one token per 1/rate s;
per client (its rate) and per peer (its failed authentications, for a bounded number of peers)."""

import pytest

from services.orders.domain.rate_limit import PeerBudget, RateLimiter, TokenBucket


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_full_bucket_allows_a_burst_then_says_how_long_to_wait() -> None:
    clock = Clock()
    bucket = TokenBucket(rate=8, burst=3, clock=clock)  # binary fractions: exact arithmetic
    assert [bucket.take() for _ in range(3)] == [0, 0, 0]
    assert bucket.take() == 0.125
    clock.now += 0.0625
    assert bucket.take() == 0.0625
    clock.now += 0.0625
    assert bucket.take() == 0


def test_the_bucket_never_holds_more_than_its_burst() -> None:
    clock = Clock()
    bucket = TokenBucket(rate=100, burst=2, clock=clock)
    clock.now += 3600
    assert [bucket.take() == 0 for _ in range(3)] == [True, True, False]


def test_each_client_has_its_own_bucket_and_a_new_rate_a_new_one() -> None:
    clock = Clock()
    limiter = RateLimiter(burst_s=1.0, clock=clock)
    assert limiter.wait("a", 1) == 0
    assert limiter.wait("a", 1) == pytest.approx(1.0)
    assert limiter.wait("b", 1) == 0
    assert limiter.wait("a", 5) == 0  # the rate changed: a bucket of 5
    clock.now += 0.5
    assert limiter.wait("c", 0.5) == 0  # below one a second, the bucket still holds one
    assert limiter.wait("c", 0.5) == pytest.approx(2.0)


def test_a_peer_may_fail_its_burst_then_waits_and_a_success_costs_nothing() -> None:
    clock = Clock()
    budget = PeerBudget(rate=0.5, burst=2, clock=clock)
    assert [budget.take("10.0.0.1"), budget.take("10.0.0.1")] == [0, 0]
    assert budget.take("10.0.0.1") == 2.0  # a token every 2 s
    assert budget.take("10.0.0.2") == 0  # another peer has its own budget
    clock.now += 2
    assert budget.take("10.0.0.1") == 0
    budget.give_back("10.0.0.1")  # that try succeeded
    assert budget.take("10.0.0.1") == 0
    assert budget.take("10.0.0.1") > 0


def test_the_peer_budget_remembers_at_most_its_number_of_peers() -> None:
    clock = Clock()
    budget = PeerBudget(rate=1, burst=1, peers=2, clock=clock)
    for peer in ("a", "b", "c"):  # "a" is forgotten when "c" comes
        assert budget.take(peer) == 0
    assert list(budget.buckets) == ["b", "c"]
    assert budget.take("b") > 0
    assert budget.take("a") == 0  # a full budget again: forgetting is bounded memory's price
