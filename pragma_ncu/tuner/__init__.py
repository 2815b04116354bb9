"""The tuner: search a kernel template's parameters inside the hardware-feasible region."""
