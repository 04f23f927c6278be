"""`./test.sh sweep`: how the gain scales with payload size, nesting and bulk writes."""
