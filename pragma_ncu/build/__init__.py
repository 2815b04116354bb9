"""Compiling and its cache (`compile`: the compile step, the cache keyed on every input, the
build nouns) and the work orders a worker is given (`task`: build and evaluate requests)."""
