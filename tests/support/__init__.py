"""Helpers that tests in several folders share (importable as ``support.<module>``).

``pyproject.toml`` puts ``tests/`` on the path of a pytest run (``pythonpath``), so a test
says ``from support.scripted_server import ScriptedServer``. Helpers one folder alone uses
stay in that folder. See ``tests/README.md``.

- :mod:`support.fake_server`: a fake OpenAI-compatible HTTP server with fault injection.
- :mod:`support.scripted_server`: that server, answering from a script of the prompt.
- :mod:`support.taymyr`: the example table the CLI and trace tests ask about.
- :mod:`support.chameleon_replies`: a scripted model with one reply queue per Chameleon module.
- :mod:`support.golden`: golden files and the ``TABLEREASON_UPDATE_GOLDEN`` switch.
"""
