"""chess-eval's Inspect tasks, registered as chess_eval/static, chess_eval/games,
chess_eval/puzzles and chess_eval/worldmodel (pyproject.toml's inspect_ai entry point)."""
