"""A question and its answer: what the model layer, the players and the core all need, below
every layer that asks.

questions reads questions.csv, checks it and samples it (a Question per row); start says where a
game or a puzzle line begins (a FEN or the initial position, chess960 or not); answers reads a
reply as a move and names the failure category when it is not one (illegal, unparseable, ...).
They import only the chess_eval core (tests/test_layout.py states the order).
"""
