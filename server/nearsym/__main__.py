"""`python -m nearsym` is the `nearsym` command."""

from nearsym.cli import main

raise SystemExit(main())
