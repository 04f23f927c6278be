"""`./test.sh versions`: the lab's v2 app across Pydantic 2 minors, each step paired."""
