"""What estimates, tests and maps: the benchmark's statistics, on numbers, never on chess.

btd: Bradley-Terry-Davidson for games with draws, its posterior and design; elo: puzzle and
human-move Elo, intervals and the world-model rubric; bootstrap: percentile intervals; mcnemar:
paired comparisons of two runs; pairs: a colour-reversed match's pentanomial score, its BTD Elo
difference and stop rule; ladder_map: the measured map between two ladders; joint: two players
rated together with their games against the rungs and each other; draws: BTD with log nu
smooth in the pair's mean Elo, a joint fit and one player's rating on it. Each is checked by
simulation in bench/ (coverage over many seeded runs).
"""
