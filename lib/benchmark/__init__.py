"""The benchmark: of the entry points, only benchmark.py imports from here.

One sub-package per mode over a shared core:
- core/: what every mode uses: questions.csv in (questions), players and their prompts
  (players, prompts, chat: the OpenAI-compatible client), parsing a reply into a move and its
  failure category (answers), asking many questions through the response cache (runner),
  a player's move in a game position with retries (turns), per-answer scores and aggregates
  (scoring), the rating models (elo for puzzles and humans, btd for games with draws),
  progress bars, result-file names and reading results back (results), and the options every
  subcommand shares (cli).
- static/: `benchmark.py run`, one answer per question of questions.csv.
- games/: `benchmark.py play` and `calibrate`, full games against the engine ladder.
- puzzles/: `benchmark.py puzzles`, whole puzzle lines chosen adaptively.
- worldmodel/: `benchmark.py worldmodel`, the world-model consistency tests.
- leaderboard/: `benchmark.py leaderboard`, every mode's result files ranked.

Imports point one way: modes import core (and lib's core), never each other; the leaderboard
reads result files, not the modes' code; core imports no mode (tests/test_layout.py).
Each mode's cli.py holds its subcommand's options and handler; benchmark.py only dispatches.
"""
