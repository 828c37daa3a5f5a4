#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import sys

from tutor.startup import load_settings_or_exit


def main() -> None:
    load_settings_or_exit()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
