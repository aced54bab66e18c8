# Thin wrapper around Meson.  The README's commands:
#   make chat [MODEL=FILE.gguf] [ARGS="..."]   set up, build and start a chat
#   make check                                  set up, build and run every test
#   make install [PREFIX=DIR]                   confab into DIR/bin (default ~/.local),
#                                               its man page and presets into DIR/share
# Missing Debian packages are installed with apt-get when run as root;
# otherwise the exact apt-get line is printed and make stops.
BUILD ?= build
PREFIX ?= $(HOME)/.local
BUILD_PKGS = meson ninja-build pkg-config gcc libc6-dev libreadline-dev libncurses-dev \
             libcurl4-openssl-dev
TEST_PKGS = tmux nodejs npm

.PHONY: all build chat check install deps deps-test clean

all: build

deps:
	@sh tests/need-packages.sh $(BUILD_PKGS)

deps-test:
	@sh tests/need-packages.sh $(BUILD_PKGS) $(TEST_PKGS)

$(BUILD)/build.ninja:
	meson setup $(BUILD)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

chat: build
	@$(BUILD)/confab chat $(if $(MODEL),-m "$(MODEL)") $(ARGS)

check: deps-test $(BUILD)/build.ninja
	@sh tests/run-all.sh $(BUILD)

install: build
	meson configure $(BUILD) -Dprefix=$(abspath $(PREFIX))
	meson install -C $(BUILD)
	@case ":$$PATH:" in *":$(abspath $(PREFIX))/bin:"*) ;; \
	  *) echo "note: $(abspath $(PREFIX))/bin is not on your PATH; add it (e.g. in ~/.profile)";; esac

clean:
	rm -rf $(BUILD)
