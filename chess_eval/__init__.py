"""chess-eval: a reproducible chess test set and benchmark for language models.

Modules directly in chess_eval/ hold what both halves need: board rules and chess knowledge
(position, phase, see, tactics), the one Stockfish wrapper (engine) and the evaluation of
every legal move built on it (evaluation), the grading of a move (grading), the Lichess
puzzle database's format (puzzledb), and small infrastructure (errors, files, figures, cli,
kvstore, records, accuracy, claim, cluster, eco, exits, fingerprint; shipped, where the
files the package ships are). The halves live in two
subpackages, chess_eval/testset/ (only the pipeline's steps, generate.py and print.py) and
chess_eval/benchmark/ (only benchmark.py and the Inspect tasks). Imports point one way: both
subpackages import from the core, never from each other, and core modules import neither
(tests/test_layout.py enforces it). The Inspect tasks, registered as chess_eval/static,
chess_eval/games, chess_eval/match, chess_eval/puzzles and chess_eval/worldmodel through
pyproject.toml's inspect_ai entry point, are in tasks; the `chess-eval` command is commands'
parser, started by launch (and by benchmark.py in a clone).
"""
