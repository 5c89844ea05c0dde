"""Store: goldset's own workspace (.goldset/): embedding cache, indexes, database backends."""
