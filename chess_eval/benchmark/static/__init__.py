"""The static run (`benchmark.py run`, the default): one answer per question of questions.csv.

cli turns the options into a StaticConfig -> run selects the questions, asks them through
core.runner, scores each answer with core.scoring, aggregates and estimates Elo -> result is
the run's frozen record, serialised in one place -> report writes the terminal summary and the
markdown report. prediction turns the static scores into a predicted game Elo by the committed
fit (data/game_elo_fit.json): family_fit's, across player families, made by bench/family_fit.py.
"""
