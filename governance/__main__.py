from governance.cli import main

main()
