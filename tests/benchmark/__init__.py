"""Tests of lib/benchmark/ and benchmark.py."""
