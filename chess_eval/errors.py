"""The project's error hierarchy: every expected failure is a ChessEvalError."""


class ChessEvalError(Exception):
    """Base class of every error this project raises on purpose."""


class EngineNotFoundError(ChessEvalError):
    """No working Stockfish binary was found."""


class EngineError(ChessEvalError):
    """The engine failed in a way a restart did not fix."""


class EngineCrash(EngineError):
    """The engine died or stalled during one search (its work is redone on a fresh one)."""


class ClusterError(ChessEvalError):
    """The Dask cluster cannot be reached, has no worker, or its workers' engines differ."""


class FetchError(ChessEvalError):
    """A download or a local source could not be read completely."""


class DataError(ChessEvalError):
    """An input file is missing, empty or not in the expected format."""


class ConfigError(ChessEvalError):
    """Command-line options or parameters that cannot work together."""


class PlayerError(ChessEvalError):
    """A benchmark player could not be built from its specification."""


class FitError(ChessEvalError):
    """A statistical fit did not converge or its estimate is not identified by the data."""
