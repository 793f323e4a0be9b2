"""Head to head: two players play each other in colour-reversed pairs of games."""
