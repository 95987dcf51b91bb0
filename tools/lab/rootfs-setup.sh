#!/bin/sh
# Runs once inside the freshly debootstrapped root filesystem (chroot), before it is cached.
# Makes a quiet, SSH-reachable systemd host: nothing may hold the dpkg lock or a console mid-test.
set -eu

# Timers and gettys that would wake up during tests; resolved and networkd are not installed.
for unit in apt-daily.timer apt-daily-upgrade.timer fstrim.timer e2scrub_all.timer e2scrub_reap.service \
            dpkg-db-backup.timer console-getty.service getty@.service serial-getty@.service \
            systemd-networkd-wait-online.service; do
  ln -sf /dev/null "/etc/systemd/system/$unit"
done

# SSH: key-only root login; host keys are generated per host by the lab tool (never shared).
rm -f /etc/ssh/ssh_host_*
cat > /etc/ssh/sshd_config.d/gpufleet-lab.conf <<'CONF'
PermitRootLogin prohibit-password
PasswordAuthentication no
HostKey /etc/ssh/ssh_host_ed25519_key
UseDNS no
CONF
systemctl enable ssh.service >/dev/null 2>&1 || true

# Journald: keep logs in memory, small, so a host's journal never fills the controller's disk.
mkdir -p /etc/systemd/journald.conf.d
printf '[Journal]\nStorage=volatile\nRuntimeMaxUse=32M\n' > /etc/systemd/journald.conf.d/gpufleet-lab.conf

# Identity is written per host at boot time by the lab tool.
rm -f /etc/hostname /etc/machine-id /var/lib/dbus/machine-id
: > /etc/machine-id
apt-get clean
rm -rf /var/lib/apt/lists/*
