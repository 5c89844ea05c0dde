from goldeval.cli import main

raise SystemExit(main())
