"""The coder: kernels as parameterized templates, instantiated for one point of their space."""
