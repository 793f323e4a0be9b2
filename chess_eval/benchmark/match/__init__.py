"""Head to head (`benchmark.py match`): two players play each other in colour-reversed pairs.

run plays the pairs from the opening book, a batch at a time, until the Elo difference is
pinned down (stats.pairs' stop rule); result is its frozen result record (MatchResult); cli
holds the subcommand's options and handler, which writes the result and ends by the core's
one tail (core.run.finish).
"""
