"""Prompt templates shipped as package text files, one folder per method; ``render`` fills them."""
