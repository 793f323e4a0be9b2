"""The world-model tests: self-consistency, mirror symmetry, temperature
(`benchmark.py worldmodel`).

prompts renders the list and choose prompts, reads listed moves and mirrors questions ->
run asks every test through core.runner and scores single moves with core.scoring -> stats
gives intervals, the trend test, the rubric and the hypothesis test -> run writes the result,
report and breakdown figure. cli holds the options and handler.
"""
