"""The benchmark: of the entry points, only benchmark.py (chess_eval.commands) and the Inspect
tasks (chess_eval.tasks) import from here.

One sub-package per mode over shared layers, lowest first:
- stats/: estimates, tests and maps (btd, elo, bootstrap, mcnemar, ladder_map), on numbers.
- question/: questions.csv in (questions), where a game begins (start), a reply read as a
  move and its failure category (answers).
- model/: the model layer: the interface, the one wrapper that owns retries, budget, charge
  and cache, one file per backend (OpenAI-compatible HTTP, Inspect).
- players/: every --model: the baselines, Maia, a model through the model layer, and the
  protocols a model is asked its move by.
- core/: what every mode uses: prompts, asking many questions through the response cache
  (runner), a player's move in a game position with retries (turns), per-answer scores and
  aggregates (scoring), progress bars, result files (results), the options every subcommand
  shares (cli).
- human/: the Lichess crosswalk: a game Elo read as a Lichess rating per time control,
  from the Maia nets' anchors (statements that cover, or the score against an anchor).
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

Imports point one way: each shared layer imports only the layers listed above it (and the
chess_eval core), modes import the shared layers, never each other; the leaderboard reads
result files, not the modes' code; no shared layer imports a mode, and no module imports
itself through others (tests/test_layout.py).
Each mode's cli.py holds its subcommand's options and handler; benchmark.py only dispatches.
"""
