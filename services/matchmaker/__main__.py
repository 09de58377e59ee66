import sys

from services.matchmaker.server import main

sys.exit(main())
