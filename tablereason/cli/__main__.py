"""``python -m tablereason.cli``: the ``tablereason`` command."""

import sys

from tablereason.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
