"""The `dtrun` command of an installed package: runs the launcher the wheel carries."""

import os
import sys
from pathlib import Path


def main():
    launcher = Path(__file__).resolve().parent / "bin" / "dtrun"
    if not os.access(launcher, os.X_OK):
        sys.exit(f"dtrun: this dtrain package carries no launcher ({launcher} is missing); "
                 "use the dtrun of the libdtrain build or installation")
    # exec, not a child: signals and the exit status are dtrun's own.
    os.execv(launcher, [str(launcher), *sys.argv[1:]])


if __name__ == "__main__":
    main()
