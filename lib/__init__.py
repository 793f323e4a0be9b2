"""Shared logic of the chess test-set generator and benchmark."""
