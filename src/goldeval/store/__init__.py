"""Store: goldeval's own workspace (.goldeval/): embedding cache, indexes, database backends."""
