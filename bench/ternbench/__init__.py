"""Helpers shared by the benchmark scripts."""
