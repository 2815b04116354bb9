"""The spec and its reading: the TaskSpec model (`model`), the one validator that reads a TOML
spec (`file`), a spec built in Python (`describe`), the bounded expressions of its tables
(`expr`), the element types (`dtypes`) and kernel templates rendered at a point (`template`)."""
