"""Backends: what answers a request (servers, the embedded model, scripts) and their registry."""
