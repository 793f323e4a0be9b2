"""Tests of lib/testset/, the steps, generate.py and print.py."""
