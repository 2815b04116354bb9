"""The `pragma-ncu` command line: thin commands over the library."""
