"""The ``averitec`` command line. Each subcommand lives in its own module here."""
