from transpile.cli import main
import sys
sys.exit(main())
