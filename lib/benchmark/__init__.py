"""The benchmark: of the entry points, only benchmark.py imports from here.

A run flows as: questions checks, filters and samples questions.csv -> players builds the
player (an LLM through llm's OpenAI-compatible client, Stockfish at a set strength, or a random
mover) -> prompts renders a named, versioned template -> runner asks every question
concurrently through the core's kvstore cache (after the player's preflight) and makes each
trace record, progress counting outcomes -> scoring reads the committed move with answers,
grades it with the core's grading and estimates Elo with the core's elo -> results formats the
summary and the markdown report and reads results back (benchmark.py writes the files);
prediction turns the accuracy into a predicted game Elo by the ladder's committed fit.

Games (`benchmark.py play` and `calibrate`): ladder defines the rungs and reads ladder.csv ->
play schedules each start condition's games, the sampler choosing rungs by Thompson sampling
on the core's btd posterior -> match runs games concurrently with a judge engine each and
stores finished ones -> game plays one game (moves through the same players and answers
parser, with retries, rules' ends and adjudication, every answer cached) -> gamereport and
gamefigures write the JSON, markdown, PGN, traces and figures. calibration plays the gauntlet
between rungs and rates them.

Puzzles (`benchmark.py puzzles`): the core's puzzledb reads the puzzle file -> puzzlesampler
picks each next puzzle by a Thompson draw from the core's puzzle-Elo posterior -> puzzleline
plays its whole line through game's turn-taking, checking off-key moves with the engine ->
puzzlerun stores finished lines, stops at the target and writes the result.

World model (`benchmark.py worldmodel`): worldmodel renders the list and choose prompts,
reads listed moves and mirrors questions -> wmrun asks every test through runner and scores
single moves with scoring -> wmscore gives intervals, the trend test, the rubric and the
hypothesis test -> wmrun writes the result, report and breakdown figure.

leaderboard gathers every kind of result on one questions file and ranks each scale with
ranking's posterior draws.
"""
