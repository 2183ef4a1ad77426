"""`python -m nearsym` is the `nearsym` command."""

from nearsym.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
