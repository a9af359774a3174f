"""The README's quick start, as a newcomer pastes it: `make run`'s command (the debug daemon
on ./data, seeded from the example) in a fresh directory holding only what a clone has, then
the quick-start block, line by line in one bash, with the admin token the daemon printed and
the port it got (make run's 8080 may be taken on a CI machine). Fails on the first command that
fails, and unless the manifest, the validation, the publish and the token came out.

Usage: readme.py WAYMARK_DEBUG_BINARY"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import waymark_daemon  # noqa: E402

ROOT = waymark_daemon.ROOT


def fail(message):
    print("readme: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def quick_start():
    text = open(os.path.join(ROOT, "README.md")).read()
    match = re.search(r"<!-- quick-start[^>]*-->\s*```sh\n(.*?)```", text, re.S)
    if not match:
        fail("README.md has no quick-start block (<!-- quick-start --> then ```sh)")
    return match.group(1)


def main():
    binary = os.path.abspath(sys.argv[1])
    block = quick_start()
    if "export WAYMARK_TOKEN=wm_..." not in block or "127.0.0.1:8080" not in block:
        fail("the quick start no longer exports the printed token or names 127.0.0.1:8080:\n" + block)
    with tempfile.TemporaryDirectory(prefix="waymark-readme-") as clone:
        # What the quick start reads from a clone, and the build make run made.
        shutil.copytree(os.path.join(ROOT, "manifests"), os.path.join(clone, "manifests"))
        os.makedirs(os.path.join(clone, ".build"))
        os.symlink(os.path.dirname(binary), os.path.join(clone, ".build", "debug"))
        cwd = os.getcwd()
        os.chdir(clone)
        try:
            # As make run starts it: `waymark serve --data-dir data`, nothing else but a free port.
            process = subprocess.Popen([binary, "serve", "--data-dir", "data", "--port", "0"],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            token = port = None
            for line in process.stdout:
                found = waymark_daemon.TOKEN.search(line)
                if found:
                    token = found.group(1)
                found = re.search(r"Listening on http://127\.0\.0\.1:(\d+)", line)
                if found:
                    port = int(found.group(1))
                    break
        finally:
            os.chdir(cwd)
        try:
            if token is None or port is None:
                fail("make run's daemon printed no admin token or no port:\n" + process.stderr.read())
            script = block.replace("export WAYMARK_TOKEN=wm_...", "export WAYMARK_TOKEN=" + token).replace("127.0.0.1:8080", "127.0.0.1:%d" % port)
            result = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=clone, capture_output=True, text=True, timeout=120,
                                    env=dict(os.environ, PATH=os.environ.get("PATH", "")))
        finally:
            process.terminate()
            process.wait(timeout=30)
        if result.returncode != 0:
            fail("the quick start failed (exit %d):\n%s\n%s" % (result.returncode, result.stdout[-3000:], result.stderr[-3000:]))
        out = result.stdout
        for what, needle in [("the manifest", '"format":"waymark.manifest/1"'), ("the validation", "valid"), ("the publish", "Published revision 2"),
                             ("the revisions", "revision"), ("the resolution", "proceed"), ("the marketing token", "wm_")]:
            if needle not in out and needle not in result.stderr:
                fail("the quick start printed no %s (%r):\n%s\n%s" % (what, needle, out[-3000:], result.stderr[-2000:]))
    lines = [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    commands = sum(1 for index, line in enumerate(lines) if index == 0 or not lines[index - 1].rstrip().endswith("\\"))
    print("readme: the quick start ran as pasted (%d commands) against make run's daemon: manifest, validation, publish, revisions, "
          "resolution and a marketing token" % commands)

if __name__ == "__main__":
    main()
