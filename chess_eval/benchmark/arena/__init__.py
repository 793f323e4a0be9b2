"""Where two sides play: what `play` and `calibrate` share.

game plays one game (moves through core.turns, the rules' ends and adjudication); match runs
games concurrently, each with a judge engine, and stores finished ones (Played: the one
record of a played or an aborted game, in play, a match and their Inspect tasks); ladder defines the
rungs and reads a ladder (its rungs, covariance, fingerprint), fitted jointly; book reads the
opening book games start from (and builds it); versions, a ladder's every committed fit,
numbered; ladder_check, what a ladder predicts for a
head-to-head match and the two ratings refitted with its games (a match's Elo on BTD).
"""
