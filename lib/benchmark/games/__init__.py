"""Full games against the engine ladder (`benchmark.py play`, `calibrate` and `book`).

ladder defines the rungs, reads ladder.csv and its covariance, and fits rungs jointly (and
again in another start condition) -> play schedules each start condition's games against
that condition's ladder, the sampler choosing rungs by Thompson sampling on core.btd's
posterior widened by the ladder's own uncertainty -> match runs games concurrently with a
judge engine each and stores finished ones -> game plays one game (moves through core.turns,
the rules' ends and adjudication) -> report (with pooling's partial pooling across
conditions) and figures write the JSON, markdown, PGN, traces and PNG figures.
calibration adds games between rungs to ladder_games.csv on the Dask cluster, the pairs
chosen by design, and fits the ladder from that file. book builds the opening book. cli
holds the subcommands' options and handlers.
"""
