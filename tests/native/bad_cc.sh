#!/bin/sh
# a C compiler that answers --version and fails every compilation (test native_errors)
if [ "$1" = "--version" ]; then echo "bad_cc 1.0"; exit 0; fi
echo "bad_cc: no compiling today" >&2
exit 1
