"""One module per ``straggler`` subcommand, each exposing ``register(subparsers)``."""
