"""Tests of chess_eval/benchmark/ and benchmark.py."""
