#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host-side runner of the rdma_mrbond virtme-ng testbed.

Starts one guest (topology T0) or two guests joined by N QEMU socket links
(topology T1), runs a role script in each, serves the guests' fault-injection
requests through QMP, enforces hard timeouts, and collects the KTAP every
guest prints. It fails loudly on a guest panic, a hang, or missing output.

Guests reach the host through a shared run directory (``--rwdir``):

* ``sync/<role>.<name>``   barrier files (written by the guests' lib.sh);
* ``req/<id>``             a fault request, e.g. ``link 0 down``; the runner
  answers in ``req/<id>.done`` with the exit status.

With ``--systemd`` (T0) the guest boots systemd as init instead, on a root of
its own: see ``SystemdRoot``.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time

ROLES = {"t0": ["hosta"], "t1": ["hosta", "hostb"]}
BASE_PORT = int(os.environ.get("MRBOND_TB_PORT", "47100"))
KTAP_RESULT = re.compile(r"^(not ok|ok) (\d+)(?: (.*))?$")


# Lockdep reports whose whole chain lies in upstream code, not rdma_mrbond,
# keyed by their two locks: (trying to acquire, already holding). See "Debug
# kernel" in the testbed guide. Any other report, and any BUG:, still fails
# the topology.
KNOWN_UPSTREAM_LOCKDEP = {
    # nvmet-rdma: an I/O connect run from the CM handler (handler_mutex ->
    # nvmet_config_sem) against port removal (nvmet_config_sem ->
    # handler_mutex in rdma_destroy_id).
    ("&id_priv->handler_mutex", "nvmet_config_sem"),
}
LOCKDEP_CIRCULAR = "WARNING: possible circular locking dependency detected"
LOCK_NAME = re.compile(r"\(([^)]+)\)\{")


def print_report(role, console, marker, before=5, after=60):
    """Prints the first report of `marker` on a guest's console, so that a
    CI log, whose run directory is gone with its machine, still shows it."""
    lines = console.splitlines()
    at = next(i for i, line in enumerate(lines) if marker in line)
    print(f"{role}: ---- console at the first '{marker}' ----")
    for line in lines[max(at - before, 0):at + after]:
        print(f"{role}: | {line}")
    print(f"{role}: ---- end of excerpt ----")


def known_upstream_reports(console):
    """The console without the known upstream lockdep reports (their WARNING
    line replaced by a note), and a description of each one removed."""
    lines = console.splitlines()
    found = []
    for i, line in enumerate(lines):
        if LOCKDEP_CIRCULAR not in line:
            continue
        block = lines[i:i + 16]

        def lock_after(heading):
            # The lock is on the first line after its heading that names one.
            for j, b in enumerate(block):
                if heading in b:
                    for nxt in block[j + 1:j + 3]:
                        m = LOCK_NAME.search(nxt)
                        if m:
                            return m.group(1)
            return None

        acquire = lock_after("is trying to acquire lock:")
        holding = lock_after("but task is already holding lock:")
        if (acquire, holding) in KNOWN_UPSTREAM_LOCKDEP:
            lines[i] = line.replace(LOCKDEP_CIRCULAR, "known upstream lockdep report")
            found.append(f"{acquire} while holding {holding}")
    return "\n".join(lines), found


def kernel_source(kdir):
    """The kernel source tree of a build dir: Kbuild's own `source` link
    (also right for a hard-linked copy of the build dir), else `../src`."""
    link = os.path.join(kdir, "source")
    if os.path.isdir(link):
        return os.path.realpath(link)
    return os.path.join(os.path.dirname(os.path.abspath(kdir)), "src")


def log(msg):
    # The results go to stdout, through run-tests.sh's tee, into the same
    # log as this: flushed first, a result line is never cut by a log line.
    sys.stdout.flush()
    print(f"[testbed {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def guest_mac(role_index, link):
    return f"52:54:00:0{role_index + 10:x}:00:{link:02x}"


class Qmp:
    """A minimal QMP client: one command per connection keeps it stateless."""

    def __init__(self, path):
        self.path = path

    def command(self, name, arguments=None, timeout=10):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(self.path)
            stream = sock.makefile("rwb")
            json.loads(stream.readline())  # greeting
            for cmd in ({"execute": "qmp_capabilities"},
                        {"execute": name, "arguments": arguments or {}}):
                stream.write(json.dumps(cmd).encode() + b"\n")
                stream.flush()
                while True:
                    reply = json.loads(stream.readline())
                    if "event" in reply:
                        continue
                    if "error" in reply:
                        raise RuntimeError(f"QMP {name}: {reply['error']}")
                    break
            return reply.get("return")


class SystemdRoot:
    """The root of a guest booted with systemd as init (``--systemd``).

    virtme-ng's ``--systemd`` boots the root it is given; the host's would
    lack what a host install puts in ``/etc``, and must not be changed. So
    the guest gets an overlay of the host's ``/``, mounted in a mount
    namespace of the guest's own, whose upper layer holds:

    * ``make -C tools install`` (debug build): mrbondctl, the unit
      ``rdma-mrbond@.service``, the udev rule;
    * the suite's fixtures from ``selftests/rdma_mrbond/boot/``: bond files
      (``*.conf``, into ``/etc/rdma_mrbond``) and units (``*.service``,
      started by the boot);
    * the runner's unit: the role script once those have run, its output
      into the run directory's path in the overlay, then power off;
    * ``/lib/modules/<release>``, linked to the kernel's module tree;
    * what makes the host's root a guest's: ``/.dockerenv`` whited out
      (seen there, systemd takes itself for a container's and ignores the
      kernel command line), and ``/tmp`` kept at boot (``D /tmp`` would
      empty the host's, which holds the tree and the run directory).

    The tree and the run directory must be on the root filesystem: an
    overlay does not reach into the mounts under its lower directory.

    The boot's target is ``mrbond-boot.target`` (sysinit, basic, and the
    units above): the host's own services (databases, NFS, timers) stay
    off, as they would only slow a boot under TCG.
    """

    TARGET = "mrbond-boot.target"

    def __init__(self, args, run_dir, role, env):
        self.args = args
        self.base = os.path.join(run_dir, "systemd-root")
        self.upper = os.path.join(self.base, "upper")
        self.work = os.path.join(self.base, "work")
        self.merged = os.path.join(self.base, "merged")
        self.run_dir = run_dir
        self.role = role
        self.env = env

    def guest_path(self, name):
        """Where the guest's writes to RUN_DIR/NAME land on the host."""
        return self.upper + os.path.join(self.run_dir, name)

    def stage(self):
        a = self.args
        for path in (a.root, self.run_dir):
            if os.stat(path).st_dev != os.stat("/").st_dev:
                raise RuntimeError(f"--systemd: {path} is not on the root filesystem, "
                                   "so not in the guest's overlay of it")
        shutil.rmtree(self.base, ignore_errors=True)
        for d in (self.upper, self.work, self.merged):
            os.makedirs(d)
        subprocess.run(["make", "-s", "-C", os.path.join(a.root, "tools"), "install",
                        "PROFILE=debug", f"DESTDIR={self.upper}"], check=True)
        units = os.path.join(self.upper, "etc", "systemd", "system")
        os.makedirs(os.path.join(units, f"{self.TARGET}.wants"))
        self.runner_units(units, self.fixtures(units))
        self.modules()
        self.host_fixes(units)

    def want(self, units, name):
        os.symlink(f"../{name}", os.path.join(units, f"{self.TARGET}.wants", name))

    def fixtures(self, units):
        """The suite's bond files and units; returns the units' names."""
        boot = os.path.join(self.args.root, "selftests", "rdma_mrbond", "boot")
        conf = os.path.join(self.upper, "etc", "rdma_mrbond")
        os.makedirs(conf, exist_ok=True)
        names = []
        for name in sorted(os.listdir(boot)):
            if name.endswith(".conf"):
                shutil.copy(os.path.join(boot, name), conf)
            elif name.endswith(".service"):
                shutil.copy(os.path.join(boot, name), units)
                self.want(units, name)
                names.append(name)
        return names

    def runner_units(self, units, after):
        """The boot's target, and the unit that runs the role script."""
        a = self.args
        out = os.path.join(self.run_dir, f"{self.role}.out")
        script = f"cd {a.root} && {self.env} bash {a.script} {self.role} >{out} 2>&1"
        with open(os.path.join(units, self.TARGET), "w") as f:
            f.write("[Unit]\nDescription=rdma_mrbond testbed boot\n"
                    "Requires=basic.target\nAfter=basic.target\n")
        with open(os.path.join(units, "mrbond-testbed.service"), "w") as f:
            f.write("[Unit]\nDescription=rdma_mrbond testbed: the role script\n"
                    f"After={' '.join(['basic.target'] + after)}\n\n"
                    "[Service]\nType=oneshot\nTimeoutStartSec=infinity\n"
                    f"ExecStart=-/bin/bash -c {shlex.quote(script)}\n"
                    "ExecStart=/bin/systemctl poweroff --no-block\n")
        self.want(units, "mrbond-testbed.service")

    def modules(self):
        kdir = self.args.kdir
        with open(os.path.join(kdir, "include", "config", "kernel.release")) as f:
            release = f.read().strip()
        modules = os.path.join(self.upper, "usr", "lib", "modules")
        os.makedirs(modules)
        os.symlink(os.path.join(kdir, ".virtme_mods", "lib", "modules", "0.0.0"),
                   os.path.join(modules, release))

    def host_fixes(self, units):
        """What in the host's root would mislead the guest."""
        # Fails under virtme (no seat), again and again; nothing here logs in.
        os.symlink("/dev/null", os.path.join(units, "systemd-logind.service"))
        if os.path.exists("/.dockerenv"):
            os.mknod(os.path.join(self.upper, ".dockerenv"), stat.S_IFCHR, os.makedev(0, 0))
        tmpfiles = os.path.join(self.upper, "etc", "tmpfiles.d")
        os.makedirs(tmpfiles)
        with open(os.path.join(tmpfiles, "tmp.conf"), "w") as f:
            f.write("d /tmp 1777 root root -\n")

    def wrap(self, vng):
        """VNG run in a mount namespace of its own, on the overlay."""
        mount = ('mount -t overlay overlay -o "lowerdir=/,upperdir=$1,workdir=$2" "$3"'
                 ' && shift 3 && exec "$@"')
        return (["unshare", "-m", "--propagation", "private", "sh", "-c", mount, "sh",
                 self.upper, self.work, self.merged] + vng)

    def collect(self, out_path):
        """The role script's output, and its results' times, where T0's are."""
        for name, dest in ((f"{self.role}.out", out_path),
                           (f"{self.role}.times", None)):
            src = self.guest_path(name)
            if os.path.exists(src):
                shutil.copy(src, dest or os.path.join(self.run_dir, name))


class Guest:
    def __init__(self, args, role, index, run_dir):
        self.role = role
        self.index = index
        self.run_dir = run_dir
        self.qmp = Qmp(os.path.join(run_dir, f"{role}.qmp"))
        self.out_path = os.path.join(run_dir, f"{role}.out")
        self.console_path = os.path.join(run_dir, f"{role}.console")
        self.proc = None
        self.args = args
        self.systemd_root = None

    def command_line(self):
        a = self.args
        qemu = [f"-qmp unix:{self.qmp.path},server=on,wait=off"]
        if a.topology == "t1":
            for link in range(a.links):
                port = BASE_PORT + link
                mode = "listen" if self.index == 0 else "connect"
                qemu.append(
                    f"-netdev socket,id=l{link},{mode}=127.0.0.1:{port} "
                    f"-device virtio-net-pci,netdev=l{link},"
                    f"mac={guest_mac(self.index, link)},speed=10000,duplex=full")
        cmd = ["vng", "--run", a.kdir, "--force-9p",
               "--memory", a.memory, "--cpus", str(a.cpus), "--verbose"]
        if not a.systemd:
            cmd += ["--user", "root", "--rwdir", self.run_dir,
                    # Mounted explicitly: a clone under /var/tmp would
                    # otherwise be hidden by the tmpfs virtme-init mounts there.
                    "--rodir", a.root]
        # Every DMA mapping bounces through swiotlb: a DMA-mapping member
        # (the rdma_rxe_dma double) then sees stale or foreign data when a
        # map, sync or unmap is missing, and refuses any address outside
        # the pool. Users that bypass the DMA API (virtio without
        # ACCESS_PLATFORM, rxe's virtual DMA) are not affected.
        # MRBOND_BOUNCE_ROLES names the guests that bounce (default: all).
        if self.role in os.environ.get("MRBOND_BOUNCE_ROLES", " ".join(ROLES["t1"])).split():
            cmd.append("--append=swiotlb=force")
        if not a.kvm:
            cmd.append("--disable-kvm")
        for opt in qemu:
            cmd.append(f"--qemu-opts={opt}")  # "-qmp …" would parse as a flag
        env = (f"MRBOND_ROLE={self.role} MRBOND_RUN={self.run_dir} "
               f"MRBOND_LINKS={a.links} MRBOND_ROOT={a.root} "
               f"MRBOND_SHAPE_RATE={shlex.quote(a.shape_rate)} "
               f"MRBOND_CTL={a.root}/target/debug/mrbondctl "
               f"MRBOND_KSRC={kernel_source(a.kdir)}")
        # Knobs of single suites, forwarded only when set on the host:
        # NVME_DEV_MODE=raw runs t1_nvme.sh over a raw rxe member;
        # MRBOND_STAGE (debug, normal) tells a suite which kernel runs it;
        # MRBOND_FULL=1 gives the long matrices all their rounds;
        # MRBOND_DKMS is the DKMS tree whose build the T0 install suite
        # installs (tools/install/test-dkms.sh);
        # MRBOND_MEMBERS=dma makes the T1 members DMA-mapping doubles;
        # MRBOND_BENCH_* are tools/bench/guest.sh's settings.
        # MRBOND_ONLY (a regex of test names) runs some of a suite's tests:
        # a developer's loop, never CI.
        for var in ("NVME_DEV_MODE", "MRBOND_STAGE", "MRBOND_FULL", "MRBOND_DKMS", "MRBOND_MEMBERS",
                    "MRBOND_ONLY",
                    "MRBOND_BENCH_QUICK",
                    "MRBOND_BENCH_RATE", "MRBOND_BENCH_REPS", "MRBOND_BENCH_MS",
                    "MRBOND_BENCH_CASES"):
            if os.environ.get(var):
                env += f" {var}={shlex.quote(os.environ[var])}"
        if a.systemd:
            self.systemd_root = SystemdRoot(a, self.run_dir, self.role, env)
            self.systemd_root.stage()
            # Read-write: the writes go to the overlay's upper layer.
            cmd += ["--root", self.systemd_root.merged, "--systemd", "--rw",
                    f"--append=systemd.unit={SystemdRoot.TARGET}"]
            return self.systemd_root.wrap(cmd)
        cmd += ["--exec", f"cd {a.root} && {env} bash {a.script} {self.role}"]
        return cmd

    def start(self):
        cmd = self.command_line()
        with open(os.path.join(self.run_dir, f"{self.role}.cmd"), "w") as f:
            f.write(" ".join(cmd) + "\n")
        console = open(self.console_path, "wb")
        # Under systemd the serial console carries the boot, and the role
        # script's output is a file (SystemdRoot.collect).
        if self.systemd_root:
            out = console
            if os.path.exists(self.out_path):  # an earlier run's
                os.unlink(self.out_path)
        else:
            out = open(self.out_path, "wb")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=console, start_new_session=True)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def wait_listening(ports, deadline):
    """QEMU's connect side fails at once if the listener is not up yet."""
    pending = set(ports)
    while pending and time.time() < deadline:
        for port in list(pending):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    pending.discard(port)
        time.sleep(0.2)
    return not pending


def find_listeners(ports):
    out = subprocess.run(["ss", "-ltnH"], capture_output=True, text=True).stdout
    return [p for p in ports if f"127.0.0.1:{p} " in out]


def serve_request(guests, text):
    """Carries out one fault request; returns (status, message)."""
    words = text.split()
    if len(words) == 3 and words[0] == "link" and words[2] in ("up", "down"):
        # A cable pull: both ends of the socket link lose carrier.
        for g in guests:
            g.qmp.command("set_link", {"name": f"l{int(words[1])}",
                                       "up": words[2] == "up"})
        return 0, "ok"
    if len(words) == 4 and words[0] == "link" and words[3] in ("up", "down"):
        # One end only: `link <n> <role> down`.
        for g in guests:
            if g.role == words[2]:
                g.qmp.command("set_link", {"name": f"l{int(words[1])}",
                                           "up": words[3] == "up"})
                return 0, "ok"
        return 2, f"unknown role {words[2]}"
    return 2, f"unknown request: {text}"


def serve_requests(guests, req_dir):
    for name in sorted(os.listdir(req_dir)):
        if name.endswith(".done") or name.endswith(".tmp"):
            continue
        path = os.path.join(req_dir, name)
        if os.path.exists(path + ".done"):
            continue
        with open(path) as f:
            text = f.read().strip()
        try:
            status, msg = serve_request(guests, text)
        except Exception as e:  # report, never leave the guest waiting
            status, msg = 1, str(e)
        log(f"fault request '{text}': {msg}")
        with open(path + ".tmp", "w") as f:
            f.write(f"{status} {msg}\n")
        os.rename(path + ".tmp", path + ".done")


def parse_ktap(path):
    """Returns (plan, passed, failed, skipped, lines) of one guest's KTAP."""
    plan, passed, failed, skipped, results = None, 0, 0, 0, []
    if not os.path.exists(path):
        return plan, passed, failed, skipped, results
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"^1\.\.(\d+)$", line)
            if m and plan is None:
                plan = int(m.group(1))
                continue
            m = KTAP_RESULT.match(line)
            if not m:
                continue
            results.append(line)
            if m.group(1) == "not ok":
                failed += 1
            elif "# SKIP" in (m.group(3) or ""):
                skipped += 1
            else:
                passed += 1
    return plan, passed, failed, skipped, results


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--topology", choices=ROLES, default="t1")
    p.add_argument("--links", type=int, default=int(os.environ.get("MRBOND_LINKS", "2")))
    p.add_argument("--kdir", required=True, help="kernel build directory")
    p.add_argument("--script", required=True, help="role script run in every guest")
    p.add_argument("--timeout", type=int, default=900, help="hard limit, seconds")
    p.add_argument("--memory", default="1536M")
    p.add_argument("--cpus", type=int, default=1,
                   help="vCPUs per guest: 2 lets a race test run both sides at once")
    p.add_argument("--shape-rate", default=os.environ.get("MRBOND_SHAPE_RATE", ""),
                   help="tbf rate on every T1 link inside the guests, e.g. 100mbit")
    p.add_argument("--run-dir", help="keep logs here (default: a temporary dir)")
    p.add_argument("--systemd", action="store_true",
                   help="T0: boot systemd as init on an overlay root with the install "
                   "(SystemdRoot)")
    p.add_argument("--kvm", action="store_true",
                   default=os.environ.get("MRBOND_KVM") == "1",
                   help="use KVM (opt-in: nested KVM does not boot guests here)")
    a = p.parse_args()
    a.root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not 1 <= a.links <= 4:
        p.error("--links must be 1..4")
    if a.systemd and a.topology != "t0":
        p.error("--systemd boots one guest: topology t0")

    run_dir = a.run_dir or tempfile.mkdtemp(prefix=f"mrbond-{a.topology}-")
    os.makedirs(run_dir, exist_ok=True)
    for sub in ("sync", "req"):
        shutil.rmtree(os.path.join(run_dir, sub), ignore_errors=True)
        os.makedirs(os.path.join(run_dir, sub))
    log(f"topology {a.topology}, {a.links} link(s), run dir {run_dir}, "
        f"{'KVM' if a.kvm else 'TCG (no KVM: nested KVM does not boot guests here)'}")

    ports = [BASE_PORT + i for i in range(a.links)] if a.topology == "t1" else []
    busy = find_listeners(ports)
    if busy:
        log(f"FAIL: ports {busy} already in use (another testbed running?)")
        return 1

    guests = [Guest(a, role, i, run_dir) for i, role in enumerate(ROLES[a.topology])]
    deadline = time.time() + a.timeout
    failures = []
    try:
        for g in guests:
            g.start()
            if g.index == 0 and ports and not wait_listening(ports, time.time() + 120):
                failures.append(f"{g.role}: QEMU never listened on {ports}")
                break
        while not failures and any(g.proc.poll() is None for g in guests):
            serve_requests(guests, os.path.join(run_dir, "req"))
            for g in guests:
                rc = g.proc.poll()
                if rc is not None and rc != 0 and not getattr(g, "reported", False):
                    g.reported = True
                    failures.append(f"{g.role}: vng exited with {rc}"
                                    + (" (kernel panic)" if rc == 255 else ""))
            if failures:
                break
            if time.time() > deadline:
                failures.append(f"hard timeout of {a.timeout} s: guest hang")
                break
            time.sleep(0.2)
    finally:
        for g in guests:
            g.kill()
            if g.systemd_root:
                g.systemd_root.collect(g.out_path)

    total_pass = total_fail = total_skip = 0
    for g in guests:
        if g.proc is None:
            failures.append(f"{g.role}: never started")
            continue
        with open(g.console_path, errors="replace") as f:
            console = f.read()
        console, known = known_upstream_reports(console)
        for k in known:
            log(f"{g.role}: known upstream lockdep report ({k}), not counted: "
                "see 'Debug kernel' in the testbed guide")
        for marker in ("Kernel panic", "BUG:", "Oops:", "WARNING:", "general protection"):
            if marker in console:
                failures.append(f"{g.role}: '{marker}' on the guest console "
                                f"(see {g.console_path})")
                print_report(g.role, console, marker)
        plan, passed, failed, skipped, results = parse_ktap(g.out_path)
        for line in results:
            print(f"{g.role}: {line}")
        if plan is None:
            failures.append(f"{g.role}: no KTAP plan in its output ({g.out_path})")
        elif plan != passed + failed + skipped:
            failures.append(f"{g.role}: KTAP plan 1..{plan} but {passed + failed + skipped} "
                            "results: output missing")
            failed += max(plan - passed - failed - skipped, 0)
        total_pass += passed
        total_fail += failed
        total_skip += skipped
    for f in failures:
        log(f"FAIL: {f}")
        total_fail += 1
    log(f"{a.topology}: {total_pass} passed, {total_fail} failed, {total_skip} skipped "
        f"(logs in {run_dir})")
    # Machine-readable summary for run-tests.sh.
    print(f"# testbed {a.topology}: pass:{total_pass} fail:{total_fail} skip:{total_skip}")
    return 1 if total_fail else 0


if __name__ == "__main__":
    sys.exit(main())
