import sys

from services.web.server import main

sys.exit(main())
