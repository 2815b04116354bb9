// A stand-in for CUDA's runtime header on the CPU (tests/fakes/cuda_on_cpu.py): nothing is needed.
#pragma once
