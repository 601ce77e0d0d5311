"""Wrappers that compose around any model: cache, retries, usage, concurrency, constraints off."""
