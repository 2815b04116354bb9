"""Diagnose: profile + compendium -> ranked findings. Shared by explain, the conductor, triage."""
