"""Full games of a model against the engine ladder (`benchmark.py play`).

play schedules each start condition's games against that condition's ladder (arena.ladder),
the sampler choosing rungs by Thompson sampling on stats.btd's posterior widened by the
ladder's own uncertainty -> arena.match runs games concurrently with a judge engine each and
stores finished ones -> arena.game plays one game -> report (with pooling's partial pooling
across conditions) and figures write the JSON, markdown, PGN, traces and PNG figures;
result is the result record. cli holds the subcommand's options and handler.
"""
