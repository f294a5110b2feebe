#!/usr/bin/env python
import atexit
import gc
import os
import sys

if __name__ == "__main__":
    # Exit without walking the heap again: CPython's shutdown collects every object the command's
    # imports built, about 0.2 s of `manage.py help`'s 0.9 s (issue 20). Registered first, this runs
    # after every other exit handler (logging's flush, weakref finalizers, ...); what is left is then
    # freed by reference counting as usual, only cycles are left to the end of the process.
    atexit.register(gc.freeze)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
