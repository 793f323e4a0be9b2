"""Tests of chess_eval/testset/, the steps, generate.py and print.py."""
