"""Full games against the engine ladder (`benchmark.py play` and `calibrate`).

ladder defines the rungs and reads ladder.csv -> play schedules each start condition's games,
the sampler choosing rungs by Thompson sampling on core.btd's posterior -> match runs games
concurrently with a judge engine each and stores finished ones -> game plays one game (moves
through core.turns, the rules' ends and adjudication) -> report and figures write the JSON,
markdown, PGN, traces and PNG figures. calibration plays the gauntlet between rungs and rates
them into the ladder. cli holds both subcommands' options and handlers.
"""
