"""The benchmark: of the entry points, only benchmark.py imports from here.

One sub-package per mode over a shared core:
- core/: what every mode uses: questions.csv in (questions), prompts, parsing a reply into a
  move and its failure category (answers), asking many questions through the response cache
  (runner), a player's move in a game position with retries (turns), per-answer scores and
  aggregates (scoring), progress bars, result files (results), the options every subcommand
  shares (cli).
- model/: the model layer: the interface, the one wrapper that owns retries, budget, charge
  and cache, one file per backend (OpenAI-compatible HTTP, Inspect), the protocols.
- players/: every --model: the baselines, Maia, a model through the model layer.
- stats/: estimates, tests and maps (btd, elo, bootstrap, mcnemar, ladder_map).
- static/: `benchmark.py run`, one answer per question of questions.csv.
- arena/: where two sides play: a game, a match of games, the ladder, the opening book.
- games/: `benchmark.py play`, a model's full games against the engine ladder.
- ladders/: `benchmark.py calibrate` and `book`, building and measuring the ladder.
- puzzles/: `benchmark.py puzzles`, whole puzzle lines chosen adaptively.
- worldmodel/: `benchmark.py worldmodel`, the world-model consistency tests.
- leaderboard/: `benchmark.py leaderboard`, every mode's result files ranked.
- compare/: `benchmark.py compare A B`, two runs measured on what they share.
- match/: `benchmark.py match`, two players head to head in colour-reversed pairs.
- inspect_eval/: the modes as Inspect tasks (chess_eval/static, /games, /match, /puzzles,
  /worldmodel), and their logs read back as result files.

Imports point one way: modes import the shared layers (stats, model, players, core) and
the shared core, never each other; the leaderboard reads result files, not the modes' code; no
shared layer imports a mode, and no module imports itself through others
(tests/test_layout.py).
Each mode's cli.py holds its subcommand's options and handler; benchmark.py only dispatches.
"""
