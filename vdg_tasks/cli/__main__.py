import sys

from vdg_tasks.cli.parser import main

sys.exit(main())
