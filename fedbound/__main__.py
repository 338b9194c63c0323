import sys

from fedbound.cli.main import main

sys.exit(main())
