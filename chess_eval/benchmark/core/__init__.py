"""The benchmark's shared core: what every mode uses.

Every mode's invocation is a run (run: its identity, its claimed stores, its requests in flight,
its stop, what it owns, its circuit breaker and its books, written as it ends however it ends;
and `finish`, every command's one tail: what was written and the exit status). A question flows
as: a Question (chess_eval.benchmark.question) -> a player (chess_eval.benchmark.players) ->
prompts renders a named, versioned template -> runner asks concurrently through the answer cache
and makes each trace record, progress counting outcomes -> the question layer's answers finds
the committed move and classifies a failure -> scoring grades it with the core's grading and
aggregates with bootstrap intervals (chess_eval.benchmark.stats). In a game or a puzzle line,
turns asks for one move with retries and feedback, through the same players, their protocols and
parser. results names result files and reads the static runs' back; header, the results' common
header; server, baselines served over HTTP; cli, the options every
subcommand shares; data, where the committed data lives (data/: the ladders, a folder each, the
book, the fits) and the names it had before.
"""
