"""Where the files the package ships are: chess_eval/_data/, found through the package.

In a clone its two entries are links to the repository's questions.csv and data/ (resolved
here, so every path names the repository's files); an installed wheel holds the files
themselves. Whether this is a clone decides where downloads go (the Maia nets) and whether
git names the code's revision.
"""

from __future__ import annotations

from pathlib import Path

SHIPPED = Path(__file__).resolve().parent / "_data"  # the package's own data folder
DATA = (SHIPPED / "data").resolve()  # the committed data the product reads
QUESTIONS = (SHIPPED / "questions.csv").resolve()  # the committed test set
ROOT = DATA.parent  # the repository in a clone; the package's _data/ once installed
CHECKOUT = (SHIPPED / "data").is_symlink()  # run from a clone (not an installed wheel)
