#!/bin/sh
# Fake target interpreter that floods: 40 MB on stderr (one endless line among others), then exits.
head -c 20000000 /dev/zero | tr '\0' 'x' >&2
yes 'I0000 flooding the log' | head -c 20000000 >&2
exit 1
