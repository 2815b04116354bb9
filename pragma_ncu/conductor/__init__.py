"""The conductor: compares each round's candidate with the historical best and decides."""
