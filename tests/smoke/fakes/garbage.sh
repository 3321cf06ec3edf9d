#!/bin/sh
# Fake target interpreter: not Python at all; prints text that is not the smoke protocol.
echo "Welcome to FakeShell 1.0"
echo "usage: fakeshell [options]"
exit 0
