"""The parameter search (`pragma-ncu autotune`, and each round of the tune loop): search a
kernel template's parameters inside the hardware-feasible region, re-test the best, decide.

`autotune` runs one search end to end; `serial` and `parallel` are the search loops on one
worker and on a pool; `space`, `strategies` and `feasibility` say which points there are,
which to try next and which can run at all; `retest` decides; `results` holds the nouns;
`output` and `table` write what a search found; `evaluator` is what a backend plugs in.
"""
