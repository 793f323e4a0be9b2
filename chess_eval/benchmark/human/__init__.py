"""What a game Elo means to a chess player: the crosswalk to Lichess ratings, above the core.

Three Maia-1 nets also play on Lichess as bots, so each has a game Elo on the reference ladder
and a Lichess rating per time control; per time control they anchor a line through which a
run's game Elo is read, every statement from the fit's posterior predictive. reading, a game
Elo with its error split into the run's own and the ladder's shared part; anchors, the bots,
their ratings and the committed files they come from; crosswalk, the line per time control
(the slope's posterior, the predictive of a reading, the expected score against an anchor);
statement, what a run is told (a figure, a one-sided bound or its score against the nearest
anchor) and the half-width a figure needs; block, a result's `human` block, its one line and
its flat metrics.
"""
