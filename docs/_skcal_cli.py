"""The parser of the ``skcal`` command as the CLI reference (``cli.md``) renders it.

sphinx-argparse parses every description and epilog as reStructuredText. The ``skcal``
subcommands that use a raw formatter (their text is laid out by hand, such as the CSV column
convention of ``skcal report``) would render garbled, so their multi-line texts are shown as
literal blocks, exactly as ``--help`` prints them. Everything else comes from
``skcal.cli._build_parser()`` unchanged, so the reference follows the code.
"""

import argparse
import textwrap

from skcal.cli import _build_parser

_RAW = (argparse.RawDescriptionHelpFormatter, argparse.RawTextHelpFormatter)


def _literal(text):
    return ".. code-block:: text\n\n" + textwrap.indent(textwrap.dedent(text).strip("\n"), "    ") + "\n"


def _as_literal(parser):
    raw = isinstance(parser.formatter_class, type) and issubclass(parser.formatter_class, _RAW)
    for attr in ("description", "epilog"):
        text = getattr(parser, attr)
        if raw and text and "\n" in text.strip("\n"):
            setattr(parser, attr, _literal(text))
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _as_literal(sub)
    return parser


def parser():
    """Return ``skcal.cli._build_parser()`` with hand-laid texts turned into literal blocks."""
    return _as_literal(_build_parser())
