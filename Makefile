# Convenience targets; each is one command you can also run by hand.
# make install PREFIX=/opt/snapshotsync INSTALL_FLAGS="--user --dry-run"
SWIFT ?= swift
PREFIX ?=
INSTALL_FLAGS ?=

.PHONY: build test install demo deb

# Release build of every product (syncd, syncctl), then their man pages and completions
# (.build/generated), which make install installs.
build:
	$(SWIFT) build -c release
	bash scripts/generate-manuals-and-completions.sh

test:
	$(SWIFT) test

# Builds, then installs binaries, units, user and configuration (see scripts/install.sh --help).
install:
	bash scripts/install.sh $(if $(PREFIX),--prefix "$(PREFIX)") $(INSTALL_FLAGS)

demo:
	bash scripts/demo.sh

# The Debian package (dpkg-buildpackage -b, docs/packaging.md), in .build-deb/packages/.
deb:
	bash scripts/build-deb.sh
