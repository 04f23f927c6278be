"""The tests' own helpers for runs, where a wrong one would make tests fail at random: two arms
of one file given the same port (two draws at random met once in CI, and the run refused the
file), or a run killed outright by one test named in another's one-line error as its leftover."""

from harness_tests.runner import _PORT_TURN, PORTS_PER_WORKER, free_port, runner_environment
from loadtest.lab.leftovers import LOCK_VARIABLE


def test_a_block_of_ports_is_handed_out_without_a_repeat() -> None:
    _PORT_TURN.clear()  # a fresh turn: half of the block, whatever this worker used before
    ports = [free_port() for _ in range(PORTS_PER_WORKER // 2)]
    assert len(set(ports)) == len(ports)


def test_every_run_gets_a_lock_of_its_own_unless_the_test_names_one() -> None:
    # Leftovers are a lock's own (lab/leftovers.py): runs under two locks never see each other's.
    first, second = runner_environment(), runner_environment()
    assert first[LOCK_VARIABLE] != second[LOCK_VARIABLE]
    assert (
        runner_environment(LAB_RUN_LOCK_FILE="/tmp/named.lock")[LOCK_VARIABLE] == "/tmp/named.lock"
    )
