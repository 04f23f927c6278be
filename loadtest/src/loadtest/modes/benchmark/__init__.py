"""`./test.sh`: the benchmark mode, the door onto the benchmark's pipeline (loadtest/pipeline/,
which compare runs too): its options, and a run of repeats with start-up samples and --fit."""
