#!/bin/sh
# Fake target interpreter: leaves a grandchild behind (holding the pipes) and exits at once.
sleep 300 &
echo $! > "$FAKE_PIDFILE"
echo '{"event": "hello"}'
exit 3
