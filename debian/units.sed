# The units of systemd/ as the package installs them (debian/rules): syncd in /usr/bin, the
# documentation in syncd(8) and /usr/share/doc/snapshotsync, and comments that name the package instead of
# scripts/install.sh. SystemdUnitTests check the units in systemd/; PackageTests check these.
s#^ExecStart=/usr/local/bin/syncd#ExecStart=/usr/bin/syncd#
s#^ExecStart=%h/\.local/bin/syncd#ExecStart=/usr/bin/syncd#
s#^Documentation=file:/usr/local/share/doc/snapshotsync/#Documentation=man:syncd(8) file:/usr/share/doc/snapshotsync/#
s#^\# Install with scripts/install\.sh (or `make install`); see docs/daemon\.md\.#\# Installed by the snapshotsync package; see syncd(8) and /usr/share/doc/snapshotsync/README.Debian.#
s#Install with `scripts/install\.sh --user`,$#Installed by the snapshotsync#
s#^\# which copies this file to ~/\.config/systemd/user/; see docs/daemon\.md\.#\# package: `systemctl --user enable --now syncd` starts it; see syncd(8).#
/^\# %h is your home directory\. install\.sh --user puts syncd in/,/^\# system-wide instead, a drop-in/c\
\# The package's syncd. (scripts/install.sh --user installs one in ~/.local/bin instead.)
