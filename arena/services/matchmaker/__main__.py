import sys

from arena.services.matchmaker.server import main

sys.exit(main())
