"""Answers a user can check: the typed value, the evidence cells behind it, warnings."""
