"""Many workers at once: one isolated worker per GPU (or per CPU worker slot), on this host or,
through Ray, across a cluster.

`workers` holds the pool (start, pin, replace, drop), `devices` picks and pins GPUs, and
`ray_workers` runs the same workers as Ray actors. The search drives a pool through
`pragma_ncu.search.parallel`.
"""
