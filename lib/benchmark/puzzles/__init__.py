"""Whole puzzle lines chosen adaptively (`benchmark.py puzzles`).

lib.puzzledb reads the puzzle file -> sampler picks each next puzzle by a Thompson draw from
stats.elo's puzzle-Elo posterior -> line plays its whole line through core.turns, checking
off-key moves with the engine -> run stores finished lines, stops at the target and writes
the result, report and figure. cli holds the options and handler.
"""
