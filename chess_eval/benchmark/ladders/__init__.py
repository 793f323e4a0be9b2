"""Building and measuring the engine ladder (`benchmark.py calibrate` and `book`).

calibration adds games between rungs to the calibration games file on the Dask cluster, the
pairs chosen by design, and fits the ladder from that file; ladder_prior gives a new engine's
ladder its prior from the committed one; held_out plays pairs no fit sees and checks the
ladder's predictions. cli holds the subcommands' options and handlers.
"""
