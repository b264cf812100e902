"""``python -m neurips26.cli``."""

from neurips26.cli import main

main()
