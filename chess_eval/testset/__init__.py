"""The test-set pipeline: of the entry points, only steps/, generate.py and print.py use it.

Data flows through the numbered steps, each a thin script over these modules: 01 fetch games
(fetch; sources records each source's byte range) -> games.pgn; 02 process games (process, which
filters with pgn and stores with gamesdb) -> games.db; 03 select games (selection, with
probecache and the core's tactics; the targets of tree) -> positions.csv; 04 fetch puzzles
(fetch, puzzles checks the header) -> lichess_puzzles.csv; 05 select puzzles (puzzle_selection
over puzzles, verified by the core's evaluation; evalcache checkpoints the evaluations) ->
puzzles.csv; 06 evaluate (the core's evaluation; questions writes the rows) -> questions.csv.
Steps 03 and 05 report shortfalls with report, and summary records a build's (what each source
gave, why a leaf is short). pipeline declares each step's fingerprint for generate.py's driver;
print.py rechecks it and compares with tree's targets.
"""
