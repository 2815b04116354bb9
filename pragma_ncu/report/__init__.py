"""Rendering of reports for people: explanations, profiles (tables and Markdown)."""
