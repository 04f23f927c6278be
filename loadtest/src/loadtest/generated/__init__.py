"""Generated apps: the model shapes users reported trouble with, the FastAPI apps built from
them in each arm's idiom, and what every mode that starts one needs (its subjects, its bytecode,
its answers normalised, its error read from its log). The scale, workers and shapes modes build
on it; it uses nothing above lab/."""
