"""The five modes as Inspect tasks (registered as chess_eval/static, /games, /match, /puzzles
and /worldmodel by chess_eval.tasks), and their logs read back as the CLI's results.

static, games, match, puzzles and worldmodel build each task; sample holds what every task
shares (the options parsed, the eval's model, the run its samples share); units runs the
adaptive tasks on Inspect's early stopping (each sample plays its own unit); options refuses
the eval options a task cannot honour; logs reads a log back as a result file and readback
does so for a results folder.

Every task calls the product's own code: the questions and their selection, the protocols,
the grading, the ladder, play's sampler, estimator and stop rule. The eval's model is asked
through the model layer's Inspect backend (model.inspect_backend), so each request lands in its
sample's transcript.
"""
