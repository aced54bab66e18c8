#!/usr/bin/env python3
"""The README's transcripts, replayed in a real terminal.

Each block the README marks with a line `<!-- transcript cols=N -->` is an
indented session: `$ confab ...` lines start the binary (CONFAB_BIN, with
`../shared` read as CONFAB_SHARED), `>>> TEXT` lines are typed at its
prompt, and every other line is what it prints.  The test runs each command
in tmux at N columns and compares the screen with the block, timings aside
(a number before `t/s`, `ms` or ` s` may differ).  With `--update` it
rewrites the blocks with what the binary printed instead.

Exit status 77 (skipped) without tmux or the shared models.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MARK = re.compile(r'^<!-- transcript cols=(\d+) -->$')
TIMING = re.compile(r'\d+(?:\.\d+)?( t/s| ms| s\b)')
PROMPT = '>>>'


def normalise(line):
    return TIMING.sub(r'#\1', line.rstrip())


class Term:
    """One command in a private tmux server."""

    def __init__(self, workdir, cols, cmd):
        self.sock = 'confab-readme-%d-%d' % (os.getpid(), time.monotonic_ns())
        script = os.path.join(workdir, 'run.sh')
        with open(script, 'w') as f:
            f.write('trap : INT\ncd %s || exit 1\n%s\necho "[exited $?]"\nexec sleep 3600\n'
                    % (shlex_quote(workdir), cmd))
        self.tm('-f', '/dev/null', 'start-server', ';', 'set-option', '-g', 'history-limit',
                '20000', ';', 'new-session', '-d', '-s', 't', '-x', str(cols), '-y', '40',
                'sh ' + shlex_quote(script))

    def tm(self, *args):
        return subprocess.run(['tmux', '-L', self.sock] + list(args), check=True,
                              capture_output=True, text=True).stdout

    def lines(self):
        out = self.tm('capture-pane', '-t', 't', '-p', '-S', '-20000').split('\n')
        out = [l.rstrip() for l in out]
        while out and not out[-1]:
            out.pop()
        return out

    def wait(self, done, what, seconds=60):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            lines = self.lines()
            if done(lines):
                return lines
            time.sleep(0.1)
        raise TimeoutError('%s (screen ends: %r)' % (what, self.lines()[-5:]))

    def close(self):
        subprocess.run(['tmux', '-L', self.sock, 'kill-server'], capture_output=True)


def shlex_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


def exited(lines):
    return bool(lines) and lines[-1].startswith('[exited ')


def at_prompt(lines):
    return bool(lines) and lines[-1] == PROMPT


def replay(block, cols, workdir, binary, shared):
    """What the binary prints for the block's commands and input."""
    out = []
    runs = []
    for line in block:
        if line.startswith('$ '):
            runs.append((line, []))
        elif line.startswith(PROMPT + ' ') and runs:
            runs[-1][1].append(line[len(PROMPT) + 1:])
    for cmdline, typed in runs:
        cmd = cmdline[2:].replace('../shared', shared)
        if not cmd.startswith('confab'):
            raise ValueError('a transcript command must start with confab: ' + cmdline)
        # one thread: the tiny model is fastest so on a loaded machine, and
        # confab's results are the same bits on any count
        cmd = shlex_quote(binary) + ' -t 1' + cmd[len('confab'):]
        term = Term(workdir, cols, cmd)
        try:
            term.wait(lambda l: at_prompt(l) or exited(l), 'the first prompt')
            for text in typed:
                term.tm('send-keys', '-t', 't', '-l', '--', text)
                echo = PROMPT + ' ' + text
                term.wait(lambda l: bool(l) and l[-1] == echo, 'the echo of ' + text)
                term.tm('send-keys', '-t', 't', 'Enter')
                term.wait(lambda l: (at_prompt(l) and echo in l) or exited(l), 'the reply to ' + text)
            lines = term.lines()
            if not exited(lines):
                term.tm('send-keys', '-t', 't', 'C-d')
                lines = term.wait(exited, 'the end of ' + cmdline)
        finally:
            term.close()
        out.append(cmdline)
        out.extend(lines[:-1])
    # the last prompt, left with Ctrl-D, is not part of the transcript
    return [l for l in out if l != PROMPT]


def blocks(readme):
    """(index of the first line, index past the last, cols) of each block."""
    i = 0
    while i < len(readme):
        m = MARK.match(readme[i])
        i += 1
        if not m:
            continue
        while i < len(readme) and not readme[i].strip():
            i += 1
        start = i
        while i < len(readme) and (readme[i].startswith('    ') or not readme[i].strip()):
            i += 1
        end = i
        while end > start and not readme[end - 1].strip():
            end -= 1
        yield start, end, int(m.group(1))


def main():
    update = '--update' in sys.argv[1:]
    src = os.environ.get('CONFAB_SRC', os.path.join(os.path.dirname(__file__), '..', '..'))
    shared = os.path.abspath(os.environ.get('CONFAB_SHARED', os.path.join(src, '..', 'shared')))
    binary = os.environ['CONFAB_BIN']
    if not shutil.which('tmux'):
        print('tmux is not installed: skipped')
        return 77
    if not os.path.isdir(os.path.join(shared, 'models')):
        print('no %s/models: skipped' % shared)
        return 77
    path = os.path.join(src, 'README.md')
    readme = open(path, encoding='utf-8').read().split('\n')
    found = list(blocks(readme))
    if not found:
        print('README.md marks no transcript')
        return 1
    failed = 0
    for start, end, cols in reversed(found):
        want = [l[4:] for l in readme[start:end]]
        with tempfile.TemporaryDirectory(prefix='confab-readme.') as work:
            env_home = os.path.join(work, 'home')
            os.makedirs(env_home)
            os.environ.update(HOME=env_home, XDG_CONFIG_HOME=os.path.join(work, 'config'),
                              XDG_STATE_HOME=os.path.join(work, 'state'),
                              XDG_DATA_HOME=os.path.join(work, 'data'), LANG='C.UTF-8',
                              LC_ALL='C.UTF-8', INPUTRC='/dev/null')
            for var in ('NO_COLOR', 'CONFAB_MODEL', 'TMUX', 'VISUAL', 'EDITOR'):
                os.environ.pop(var, None)
            got = replay(want, cols, work, binary, shared)
        if update:
            readme[start:end] = ['    ' + l if l else '' for l in got]
            continue
        a = [normalise(l) for l in want]
        b = [normalise(l) for l in got]
        if a != b:
            failed += 1
            print('README.md line %d: the transcript is not what confab prints now' % (start + 1))
            for i in range(max(len(a), len(b))):
                x = a[i] if i < len(a) else '<none>'
                y = b[i] if i < len(b) else '<none>'
                if x != y:
                    print('  line %d of the block\n    README: %s\n    confab: %s' % (i + 1, x, y))
                    break
            print('  (tests/ui/readme_transcripts.py --update rewrites the blocks)')
    if update:
        open(path, 'w', encoding='utf-8').write('\n'.join(readme))
        print('rewrote %d transcript(s) in %s' % (len(found), path))
        return 0
    print('%d transcript(s), %d differ' % (len(found), failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
