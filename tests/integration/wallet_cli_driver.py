#!/usr/bin/env python3
"""Drives a stock monero-wallet-cli on a terminal, as a person types into it.

    wallet_cli_driver.py LOG_FILE -- COMMAND [ARG...]

Starts COMMAND (monero-wallet-cli and its options, or the same through
scripts/monero-trixie.sh exec) on a pseudo-terminal (python3-pexpect), answers the
questions it asks before its first prompt, then reads wallet commands from stdin, one a
line, as COMMAND or COMMAND<TAB>DONE: DONE is a regular expression for what the
command prints once it is done (default: anything). Each is typed at the "[wallet …]:"
prompt; the questions it asks on the way are answered as a user who means it would: the
wallet password (the wallets here have an empty one), the offer to set up background
mining with "N", and every other "(Y/Yes/N/No)" confirmation ("Is this okay?", a fee or
backlog warning, a rescan) with "Y". Once the prompt is back, one JSON line goes to
stdout:

    {"command": "...", "ok": true, "output": "<what it printed, colours stripped>"}

("ok": false with "error" when the wallet quit or its prompt did not come back within
the command's time; then the driver ends). At the end of stdin it types "exit" and
waits for the wallet to save and quit. Everything the wallet printed goes to LOG_FILE
as well.

The command is done when DONE has been printed, the wallet has gone quiet and its last
line is the prompt. Newer wallets (0.18.4) read the terminal with readline while a
command runs and redraw the prompt after every line they print, so a prompt alone
does not say the command is over.
"""

import json
import re
import sys
import time

import pexpect

# What the wallet's last line says once it has gone quiet (colours stripped).
PROMPT = re.compile(r"\[wallet [^\]\n]*\]: *$")
PASSWORD = re.compile(r"(?i)password[^\n:]*: *$")
YES_NO = re.compile(r"\((Y/Yes/N/No|y/n)\)[^\n]*: *$")
# Terminal control a prompt may carry: CSI and OSC sequences, two-byte escapes, and the
# backspaces and other control characters readline moves the cursor with after a redraw
# (0.18.4 ends its prompt with spaces and backspaces over them).
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"
                  r"|\x1b[()][0-9A-Za-z]|\x1b[=>78]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# Seconds a command may take before its prompt is back: a refresh through the free
# tier's shaped bucket, a transfer's burst of calls.
COMMAND_TIMEOUT = 240
# The wallet is waiting once it printed nothing for this long.
QUIET = 0.7


def clean(text):
    return ANSI.sub("", text).replace("\r", "")


class NoPrompt(Exception):
    """The wallet quit, or did not come back to its prompt in time; text is what it
    printed until then."""

    def __init__(self, why, text):
        super().__init__(why)
        self.why = why
        self.text = clean(text)


def until_prompt(child, timeout, done):
    """Answers questions until DONE was printed and the wallet waits at its prompt;
    returns what it printed. Raises NoPrompt."""
    text = ""
    answered = 0  # questions before this offset were answered already
    deadline = time.monotonic() + timeout
    while True:
        if time.monotonic() > deadline:
            raise NoPrompt("no prompt within %d s" % timeout, text)
        try:
            text += child.read_nonblocking(65536, timeout=QUIET)
            continue
        except pexpect.TIMEOUT:
            pass
        except pexpect.EOF:
            raise NoPrompt("the wallet quit", text)
        tail = clean(text[answered:])
        if PROMPT.search(tail) and done.search(clean(text)):
            return clean(text)
        if PASSWORD.search(tail):
            child.sendline("")
            answered = len(text)
        elif YES_NO.search(tail):
            child.sendline("N" if "background mining" in tail[-400:] else "Y")
            answered = len(text)


def unlock_if_locked(child):
    """Answers a password prompt the wallet printed while it waited for a command (a lock
    after inactivity, should it still come), so the next command is not taken for the
    password."""
    text = ""
    try:
        while True:
            text += child.read_nonblocking(65536, timeout=QUIET)
    except pexpect.TIMEOUT:
        pass
    except pexpect.EOF:
        return  # the command that follows reports it
    if PASSWORD.search(clean(text)):
        child.sendline("")
        until_prompt(child, COMMAND_TIMEOUT, re.compile(r"\S"))


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.stderr.write(__doc__)
        return 2
    log = open(sys.argv[1], "a", encoding="utf-8", errors="replace")
    child = pexpect.spawn(sys.argv[3], sys.argv[4:], encoding="utf-8",
                          codec_errors="replace", dimensions=(50, 400))
    child.logfile_read = log

    def answer(command, **fields):
        print(json.dumps(dict(command=command, **fields)), flush=True)

    start_done = re.compile(r"Background refresh thread started|[Ee]rror")
    try:
        answer("(start)", ok=True, output=until_prompt(child, COMMAND_TIMEOUT, start_done))
    except NoPrompt as e:
        answer("(start)", ok=False, error=e.why, output=e.text)
        return 1
    # The console locks itself after inactivity-lock-timeout (90 s on 0.18.4) and then
    # takes the next line as the password: the test waits longer than that between
    # commands (mining, the payer's transfer), so the lock is turned off first.
    child.sendline("set inactivity-lock-timeout 0")
    try:
        # Done once its password question was asked (and answered): 0.18.4 redraws its
        # prompt before it asks, so a prompt alone does not mean the command finished.
        until_prompt(child, COMMAND_TIMEOUT, re.compile(r"[Pp]assword"))
    except NoPrompt as e:
        answer("(set inactivity-lock-timeout 0)", ok=False, error=e.why, output=e.text)
        return 1
    for line in sys.stdin:
        command, _, done = line.rstrip("\n").partition("\t")
        command = command.strip()
        if not command:
            continue
        try:
            unlock_if_locked(child)
            child.sendline(command)
            output = until_prompt(child, COMMAND_TIMEOUT, re.compile(done or r"\S"))
            answer(command, ok=True, output=output)
        except NoPrompt as e:
            answer(command, ok=False, error=e.why, output=e.text)
            return 1
    child.sendline("exit")
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    return 0 if child.exitstatus == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
