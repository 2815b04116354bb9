"""The worker: a spawned child process that owns the GPU, loads cubins, verifies and times.

The parent (`pragma_ncu.pool.runner`) talks to it over a line-delimited JSON protocol
(`pragma_ncu.worker.protocol`). A crash or hang of a candidate kills only the worker.
"""
