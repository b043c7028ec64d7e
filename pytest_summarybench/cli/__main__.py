"""``python -m pytest_summarybench.cli``: the same as the ``summarybench`` command."""

import sys

from . import main

sys.exit(main())
