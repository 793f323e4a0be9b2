"""The numbered pipeline steps; each also runs alone as a script."""
