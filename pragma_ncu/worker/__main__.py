"""Worker entry point: `python -m pragma_ncu.worker --side MODULE` serves protocol requests
on stdin/stdout for one device side (see `serve`)."""

from __future__ import annotations

import sys

from pragma_ncu.worker.serve import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
