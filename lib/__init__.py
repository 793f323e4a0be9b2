"""The shared core of the test-set generator and the benchmark.

Modules directly in lib/ hold what both halves need: board rules and chess knowledge
(position, phase, see, tactics), the one Stockfish wrapper (engine) and the evaluation of
every legal move built on it (evaluation), the grading of a move (grading), the Lichess
puzzle database's format (puzzledb), and small infrastructure (errors, files, figures, cli,
kvstore, records). The halves live in two subpackages, lib/testset/ (only the pipeline's
steps, generate.py and print.py) and lib/benchmark/ (only benchmark.py). Imports point one
way: both subpackages import from the core, never from each other, and core modules import
neither (tests/test_layout.py enforces it).
"""
