from goldset.cli import main

raise SystemExit(main())
