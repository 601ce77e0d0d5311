"""OpenAI-compatible servers over HTTP: the chat and completion endpoints and what they share."""
