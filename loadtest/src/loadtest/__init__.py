"""The lab's benchmark: locust scenarios and the runner behind ./test.sh."""
