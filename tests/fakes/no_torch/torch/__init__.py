"""Put first on a worker's PYTHONPATH to make torch unimportable there, even on a machine that
has it: the missing-library path is tested everywhere alike."""

raise ImportError("No module named 'torch' (hidden by tests/fakes/no_torch)")
