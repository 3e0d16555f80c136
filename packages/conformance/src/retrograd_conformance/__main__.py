"""``python -m retrograd_conformance`` is the CLI."""

from .cli import main

raise SystemExit(main())
