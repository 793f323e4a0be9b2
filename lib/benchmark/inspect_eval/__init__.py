"""The four modes as Inspect tasks (registered as chess_eval/static, /games, /puzzles and
/worldmodel by the `chess_eval` package), and their logs read back as the CLI's results.

Every task calls the product's own code: the questions and their selection, the protocols,
the grading, the ladder, play's sampler, estimator and stop rule. The eval's model is asked
through the model layer's Inspect backend (model.inspect_backend), so each request lands in its
sample's transcript.
"""
