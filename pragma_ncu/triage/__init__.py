"""Triage: two versions of a program's kernels in, "what got slower and why" out."""
