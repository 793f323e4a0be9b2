"""The leaderboard (`benchmark.py leaderboard` and `report`): every mode's result files, ranked.

board reads the static, games, puzzles and world-model result files of one directory (never the
modes' code: only what they wrote), keeps those on one questions file, and writes a table per
Elo scale with ranking's posterior draws (P(stronger than the next), rank intervals), markdown,
SVG and PNG (paired: the rank draws of static runs on the same questions); testsets finds the
static runs made on a test set committed before this one, which board lists apart. site renders
the same selection as a static HTML site: views turns result files (JSON, the play runs' PGN and
traces, ladder.csv) into plain data, templates/ (Jinja2, autoescaped) into pages, assets/ holds
the CSS and the viewer's script. cli holds the options and handlers.
"""
