"""The benchmark: of the entry points, only benchmark.py imports from here.

A run flows as: questions checks, filters and samples questions.csv -> players builds the
player (an LLM through llm's OpenAI-compatible client, Stockfish at a set strength, or a random
mover) -> prompts renders a named, versioned template -> runner asks every question
concurrently through the core's kvstore cache (after the player's preflight) and makes each
trace record, progress counting outcomes -> scoring reads the committed move with answers,
grades it with the core's grading and estimates Elo with the core's elo -> results formats the
summary, the markdown report and the leaderboard (benchmark.py writes the files).
New capabilities (games against a ladder, world-model tests, adaptive puzzle runs) go here
as modules or subpackages.
"""
