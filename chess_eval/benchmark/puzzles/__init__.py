"""Whole puzzle lines chosen adaptively (`benchmark.py puzzles`).

chess_eval.puzzledb reads the puzzle file -> sampler picks each next puzzle by a Thompson draw from
stats.elo's puzzle-Elo posterior -> line plays its whole line through core.turns, checking
off-key moves with the engine -> run stores finished lines, stops at the target and writes
the result, report and figure. pool builds the committed puzzle pool `puzzles` reads
by default. cli holds the options and handler.
"""
