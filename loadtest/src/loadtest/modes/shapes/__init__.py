"""`./test.sh shapes`: the model shapes users reported trouble with, on the request path."""
