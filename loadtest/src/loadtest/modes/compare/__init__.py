"""`./test.sh compare FILE`: the paired protocol against services a file declares."""
