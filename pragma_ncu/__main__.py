"""`python -m pragma_ncu` runs the command-line interface."""

from pragma_ncu.cli.main import main

if __name__ == "__main__":
    main()
