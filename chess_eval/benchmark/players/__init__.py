"""Who answers: every --model a mode accepts, made by `player.make_player`.

player: the Player interface, the baselines (random, Stockfish at a set strength, the
families' engines, softmax and mix), a model asked through the model layer, and the
answer-cache rules every player shares; maia: the Maia-1 nets' own runtime (numpy);
protocols: how a model player is asked for its move (fen, blind, chat, tools, pgn), each one
small object over a Model, with its prompt text and its conversation state.
"""
