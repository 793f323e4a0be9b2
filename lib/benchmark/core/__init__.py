"""The benchmark's shared core: everything more than one mode uses.

A question flows as: questions checks and samples questions.csv -> players builds the player
(an LLM through chat's OpenAI-compatible client, Stockfish at a set strength, a random mover)
-> prompts renders a named, versioned template -> runner asks concurrently through the
kvstore cache and makes each trace record, progress counting outcomes -> answers finds the
committed move and classifies a failure -> scoring grades it with lib's grading and
aggregates with bootstrap intervals, estimating Elo with elo. In a game or a puzzle line,
turns asks for one move with retries and feedback, through the same players and parser.

Rating lives here, not in lib/, because only the benchmark rates: elo (puzzle and
human-calibrated Elo, intervals, the world-model rubric) and btd (Bradley-Terry-Davidson
for games with draws, its posterior). results names result files and reads the static runs'
back for the leaderboard; cli holds the options and defaults every subcommand shares.
"""
