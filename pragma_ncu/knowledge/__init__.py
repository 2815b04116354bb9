"""Knowledge: the metric compendium (curated core + what `knowledge build` generates)."""
