"""The tests' port helper: two arms of one file never get the same port (two draws at random
met once in CI, and the run refused the file)."""

from harness_tests.runner import PORTS_PER_WORKER, free_port


def test_a_block_of_ports_is_handed_out_without_a_repeat() -> None:
    ports = [free_port() for _ in range(PORTS_PER_WORKER // 2)]
    assert len(set(ports)) == len(ports)
