"""`benchmark.py compare A B`: is B better than A, measured on what the two runs share.

paired holds the statistics: a paired bootstrap over the questions both static runs answered
(stratified by source and Elo bucket, as each run's own intervals are), the exact McNemar test
of a binary outcome, and the power of a paired comparison. compare reads two result files,
refuses runs that share nothing comparable, and builds the comparison of static runs (every
headline metric, overall and by stratum), puzzle runs (their puzzle Elos) and play runs on one
ladder (the ladder's shared error cancelled). plan says, before a run, how many questions,
puzzles or games a comparison needs. cli holds the subcommand's options and handler. Like the
leaderboard, this mode reads result files, never another mode's code.
"""
