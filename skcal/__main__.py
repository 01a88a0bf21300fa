"""``python -m skcal``: the same as the ``skcal`` command."""

import sys

from skcal.cli import main

if __name__ == "__main__":
    sys.exit(main())
