"""The leaderboard (`benchmark.py leaderboard`): every mode's result files, ranked.

board reads the static, games, puzzles and world-model result files of one directory (never
the modes' code: only what they wrote), keeps those on one questions file, and writes a table
per Elo scale with ranking's posterior draws (P(stronger than the next), rank intervals),
markdown, SVG and PNG. cli holds the options and handler.
"""
